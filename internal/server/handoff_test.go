package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The handoff routes against the scripted upstream: each A2A answer the
// routes translate (protocol.md §7.3). A fake on purpose: the embedded
// agent's handoff service answers none of the failures on demand.

type handoffAnswer struct {
	Status int
	Body   map[string]any
	Raw    string
}

func callHandoff(t *testing.T, base, method, op string, body any, auth string) handoffAnswer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(base, "/")+"/iac-code/handoff/"+op, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	a := handoffAnswer{Status: res.StatusCode, Raw: string(raw)}
	_ = json.Unmarshal(raw, &a.Body)
	return a
}

func (a handoffAnswer) is(t *testing.T, status int, want string) {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if a.Status != status || fmt.Sprint(a.Body) != fmt.Sprint(w) {
		t.Fatalf("got %d %s, want %d %s", a.Status, a.Raw, status, want)
	}
}

var targetOwner = map[string]any{"sandboxId": "sb-2", "activationId": "act-2", "runId": "run-2", "leaseId": "lease-2"}

// aguiReceipt is a receipt of an AG-UI session as A2A issues it.
func aguiReceipt(e *env, threadID, guidanceID string) map[string]any {
	return map[string]any{"protocol": "agui", "version": "session-handoff-v1", "threadId": threadID,
		"aguiIdentity": map[string]any{"threadId": threadID, "executionId": "exec-1", "rosInvocationId": "invocation-1"},
		"cwd":          filepath.Join(e.Root, "ws"), "userId": nil, "mode": "normal", "guidanceId": guidanceID, "inputDigest": "digest-1"}
}

func applyBody(e *env, threadID string, pending map[string]any) map[string]any {
	return map[string]any{"receipt": aguiReceipt(e, threadID, "guidance-1"), "target": targetOwner, "inputDigest": "digest-1",
		"pendingInput": pending, "callerMetadata": map[string]any{"iac_code": map[string]any{"iac_code_model": "model-x"}}}
}

// TestHandoffRouteChecks: the unknown operation, the whole-header bearer
// check and the AG-UI identity, each answered before A2A is called.
func TestHandoffRouteChecks(t *testing.T) {
	s := &script{}
	url, e := scriptedEnvWith(t, s, scriptedOptions{authToken: "tok"})
	callHandoff(t, url, http.MethodGet, "migrate", nil, "Bearer tok").is(t, 404, `{"error":"Unknown handoff operation"}`)
	// The whole header is compared: another letter case of the scheme is
	// refused here, unlike on POST / (§2.3).
	callHandoff(t, url, http.MethodGet, "capabilities", nil, "bearer tok").is(t, 401, `{"error":"Unauthorized"}`)
	callHandoff(t, url, http.MethodGet, "migrate", nil, "").is(t, 401, `{"error":"Unauthorized"}`)
	noIdentity := `{"error":"AG-UI handoff identity is required"}`
	callHandoff(t, url, http.MethodPost, "prepare", map[string]any{"protocol": "a2a"}, "Bearer tok").is(t, 400, noIdentity)
	callHandoff(t, url, http.MethodPost, "discover", map[string]any{"protocol": "agui"}, "Bearer tok").is(t, 400, noIdentity)
	callHandoff(t, url, http.MethodPost, "restore", map[string]any{"receipt": map[string]any{"protocol": "A2A"}}, "Bearer tok").is(t, 400, noIdentity)
	callHandoff(t, url, http.MethodPost, "authorize", map[string]any{"receipt": "agui"}, "Bearer tok").is(t, 400, noIdentity)
	invalid := `{"error":"Invalid handoff request"}`
	callHandoff(t, url, http.MethodPost, "prepare", `{"protocol":`, "Bearer tok").is(t, 400, invalid)
	callHandoff(t, url, http.MethodPost, "prepare", `[]`, "Bearer tok").is(t, 400, invalid)
	if got := s.calls(); got != "[]" {
		t.Fatalf("A2A was called: %s", got)
	}
	_ = e
}

// TestHandoffUnsupported: an A2A without the session-handoff service (404)
// is answered as unsupported, for every operation.
func TestHandoffUnsupported(t *testing.T) {
	s := &script{}
	url, e := scriptedEnv(t, s)
	callHandoff(t, url, http.MethodGet, "capabilities", nil, "").is(t, 200, `{"version":"session-handoff-v1","supported":false}`)
	callHandoff(t, url, http.MethodPost, "prepare", map[string]any{"protocol": "agui"}, "").is(t, 200, `{"status":"UNSUPPORTED"}`)
	callHandoff(t, url, http.MethodPost, "discover", map[string]any{"request": map[string]any{"protocol": "agui"}}, "").is(t, 200, `{"status":"UNSUPPORTED"}`)
	callHandoff(t, url, http.MethodPost, "apply-input", applyBody(e, "thread-s", map[string]any{"query": "hi"}), "").is(t, 200, `{"status":"UNSUPPORTED"}`)
	if got := s.calls(); got != "[handoff:capabilities handoff:prepare handoff:discover handoff:apply-input]" {
		t.Fatalf("A2A calls %s", got)
	}
}

// TestHandoffProxy: the operations reach A2A with its token, capabilities
// as a GET without a body, the others as a POST of the body as sent, and
// A2A's answer comes back as it is.
func TestHandoffProxy(t *testing.T) {
	s := &script{handoff: func(op string, n int, body map[string]any) (int, string) {
		if op == "capabilities" {
			return 200, `{"version":"session-handoff-v1","supported":true,"protocols":["a2a","agui"]}`
		}
		return 200, `{"status":"PREPARED","receipt":{"protocol":"agui","epoch":7}}`
	}}
	url, _ := scriptedEnvWith(t, s, scriptedOptions{upstreamToken: "up-tok"})
	callHandoff(t, url, http.MethodGet, "capabilities", nil, "").is(t, 200, `{"version":"session-handoff-v1","supported":true,"protocols":["a2a","agui"]}`)
	sent := `{"protocol":"agui","epoch":7,"migrationId":"m-1","pendingInput":{"query":"q"}}`
	callHandoff(t, url, http.MethodPost, "prepare", sent, "").is(t, 200, `{"status":"PREPARED","receipt":{"protocol":"agui","epoch":7}}`)
	if got := fmt.Sprint(s.auth); got != "[GET Bearer up-tok POST Bearer up-tok]" {
		t.Fatalf("A2A calls %s", got)
	}
	if s.bodies[0] != "" || s.bodies[1] != sent {
		t.Fatalf("bodies %q", s.bodies)
	}
}

// TestHandoffUpstreamFailures: any other A2A failure is 200 UNKNOWN
// agui_handoff_upstream_unconfirmed.
func TestHandoffUpstreamFailures(t *testing.T) {
	answers := map[string]func() (int, string){
		"500":        func() (int, string) { return 500, `{"error":"boom"}` },
		"400":        func() (int, string) { return 400, `{"error":"Invalid session handoff identity"}` },
		"not object": func() (int, string) { return 200, `["PREPARED"]` },
		"not json":   func() (int, string) { return 200, `PREPARED` },
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			s := &script{handoff: func(string, int, map[string]any) (int, string) { return answer() }}
			url, e := scriptedEnv(t, s)
			want := `{"status":"UNKNOWN","reason":"agui_handoff_upstream_unconfirmed"}`
			callHandoff(t, url, http.MethodGet, "capabilities", nil, "").is(t, 200, want)
			callHandoff(t, url, http.MethodPost, "restore", map[string]any{"receipt": aguiReceipt(e, "t", "g")}, "").is(t, 200, want)
			callHandoff(t, url, http.MethodPost, "apply-input", applyBody(e, "thread-s", map[string]any{"query": "hi"}), "").is(t, 200, want)
		})
	}
}

// TestHandoffApplyInputDelivers: A2A's NOT_READY agui_input_delivery_required
// makes the adapter deliver the pending interrupt response itself, as a
// resume with runId = guidanceId, the execution fence and the input
// digest, then ask A2A again and answer with that second answer.
func TestHandoffApplyInputDelivers(t *testing.T) {
	const completed = `{"statusUpdate":{"taskId":"task-1","contextId":%q,"status":{"state":"TASK_STATE_COMPLETED"}}}`
	s := &script{
		answer: func(method string, n int, ctxID string) (bool, []string) {
			input := permissionInput("task-1", ctxID)
			switch {
			case method == "SendStreamingMessage" && n == 0:
				return true, []string{`{"task":` + waitingTask(ctxID, input) + `}`}
			case method == "SendStreamingMessage":
				return true, []string{fmt.Sprintf(completed, ctxID)}
			case method == "GetTask":
				return false, []string{waitingTask(ctxID, input)}
			}
			return false, []string{`{}`}
		},
		handoff: func(op string, n int, body map[string]any) (int, string) {
			if n == 0 {
				return 200, `{"status":"NOT_READY","reason":"agui_input_delivery_required"}`
			}
			return 200, `{"status":"ALREADY_APPLIED","inputDigest":"digest-1","taskId":"task-1"}`
		},
	}
	url, e := scriptedEnv(t, s)
	it := interrupts(t, post(t, url, e.body("thread-s", "run-1", "hi", nil), nil))[0]
	pending := map[string]any{"interrupt_responses": []any{allow(it["id"])}}
	callHandoff(t, url, http.MethodPost, "apply-input", applyBody(e, "thread-s", pending), "").
		is(t, 200, `{"status":"ALREADY_APPLIED","inputDigest":"digest-1","taskId":"task-1"}`)
	if got := s.calls(); got != "[SendStreamingMessage handoff:apply-input GetTask SendStreamingMessage handoff:apply-input]" {
		t.Fatalf("A2A calls %s", got)
	}
	var first map[string]any
	_ = json.Unmarshal([]byte(s.bodies[1]), &first)
	if first["skipDelivery"] != true {
		t.Fatalf("apply-input without skipDelivery: %s", s.bodies[1])
	}
	var send struct {
		Params struct {
			Message struct {
				Metadata struct {
					IacCode map[string]any `json:"iac_code"`
				}
			}
		}
	}
	_ = json.Unmarshal([]byte(s.bodies[3]), &send)
	md := send.Params.Message.Metadata.IacCode
	fenceWant := `map[owner:map[activationId:act-2 identityKind:slot leaseId:lease-2 quotaLeaseId:<nil> runId:run-2 sandboxId:sb-2] version:session-handoff-v1]`
	if fmt.Sprint(md["execution_fence"]) != fenceWant || md["input_digest"] != "digest-1" || md["guidance_id"] != "guidance-1" {
		t.Fatalf("delivered metadata %v in %s", md, s.bodies[3])
	}
	// The delivered run is the thread's run guidance-1: a repeat is a
	// duplicate, never a second delivery.
	doc := readThreadFile(t, e.StateDir, "thread-s")
	if _, ok := doc["runDigests"].(map[string]any)["guidance-1"]; !ok {
		t.Fatalf("runDigests %v", doc["runDigests"])
	}
	if p := doc["execution"].(map[string]any)["pending"].(map[string]any); len(p) != 0 {
		t.Fatalf("pending after the delivery: %v", p)
	}
}

// TestHandoffApplyInputRefusals: a pending input that cannot be delivered
// is 400 Invalid handoff request (an image whose bytes do not match its
// checkpoint) or, when admission refuses it, 200 UNKNOWN; A2A is not asked
// again either way.
func TestHandoffApplyInputRefusals(t *testing.T) {
	img := []byte("\x89PNG\r\n\x1a\n-not-really")
	sum := sha256.Sum256(img)
	item := func(size int, digest string) map[string]any {
		return map[string]any{"image_attachments": map[string]any{"items": []any{map[string]any{
			"bytes_base64": base64.StdEncoding.EncodeToString(img), "size_bytes": size, "sha256": digest,
			"media_type": "image/png", "filename": "a.png"}}}, "query": "look"}
	}
	cases := []struct {
		name    string
		pending map[string]any
		status  int
		want    string
	}{
		{"size changed", item(len(img)+1, hex.EncodeToString(sum[:])), 400, `{"error":"Invalid handoff request"}`},
		{"digest changed", item(len(img), strings.Repeat("0", 64)), 400, `{"error":"Invalid handoff request"}`},
		// A guidance for a thread this adapter does not have: EXECUTION_LOST.
		{"not admitted", item(len(img), hex.EncodeToString(sum[:])), 200, `{"status":"UNKNOWN","reason":"agui_handoff_upstream_unconfirmed"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &script{handoff: func(string, int, map[string]any) (int, string) {
				return 200, `{"status":"NOT_READY","reason":"agui_input_delivery_required"}`
			}}
			url, e := scriptedEnv(t, s)
			callHandoff(t, url, http.MethodPost, "apply-input", applyBody(e, "thread-unknown", c.pending), "").is(t, c.status, c.want)
			if got := s.calls(); got != "[handoff:apply-input]" {
				t.Fatalf("A2A calls %s", got)
			}
		})
	}
}

// TestHandoffApplyInputPassThrough: any other apply-input answer is A2A's,
// and nothing is delivered by the adapter.
func TestHandoffApplyInputPassThrough(t *testing.T) {
	for _, answer := range []string{
		`{"status":"APPLIED","inputDigest":"digest-1"}`,
		`{"status":"NOT_READY","reason":"destination_not_authorized"}`,
		`{"status":"CONFLICT","reason":"guidance_payload_changed"}`,
	} {
		s := &script{handoff: func(string, int, map[string]any) (int, string) { return 200, answer }}
		url, e := scriptedEnv(t, s)
		callHandoff(t, url, http.MethodPost, "apply-input", applyBody(e, "thread-s", map[string]any{"query": "hi"}), "").is(t, 200, answer)
		if got := s.calls(); got != "[handoff:apply-input]" {
			t.Fatalf("A2A calls %s", got)
		}
	}
}

func readThreadFile(t *testing.T, stateDir, threadID string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(stateDir, "threads", threadID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestHandoffApplyInputGuidanceImage: a handed-over guidance with an image
// is delivered to the running pipeline as an active guidance (runId and
// message id = guidanceId), its image checked and sent with its file name,
// the caller's current model and the execution fence with it.
func TestHandoffApplyInputGuidanceImage(t *testing.T) {
	img := []byte("\x89PNG\r\n\x1a\n-demo-image")
	sum := sha256.Sum256(img)
	encoded := base64.StdEncoding.EncodeToString(img)
	release := make(chan struct{})
	s := &script{
		answer: func(method string, n int, ctxID string) (bool, []string) {
			if n == 0 {
				return true, []string{fmt.Sprintf(`{"task":{"id":"task-1","contextId":%q,"status":{"state":"TASK_STATE_WORKING"}}}`, ctxID)}
			}
			return true, []string{fmt.Sprintf(`{"statusUpdate":{"taskId":"task-1","contextId":%q,"status":{"state":"TASK_STATE_WORKING"}}}`, ctxID)}
		},
		hold: func(method string, n int) <-chan struct{} {
			if n == 0 {
				return release // the pipeline's own run streams on
			}
			return nil
		},
		handoff: func(op string, n int, body map[string]any) (int, string) {
			if n == 0 {
				return 200, `{"status":"NOT_READY","reason":"agui_input_delivery_required"}`
			}
			return 200, `{"status":"ALREADY_APPLIED","inputDigest":"digest-1"}`
		},
	}
	url, e := scriptedEnv(t, s)
	pipeline := openStream(t, url, e.body("thread-s", "run-1", "run the pipeline", map[string]any{"runMode": "pipeline"}))
	pipeline.waitFor(t, "RUN_STARTED")
	waitUntil(t, func() bool {
		raw, err := os.ReadFile(filepath.Join(e.StateDir, "threads", "thread-s.json"))
		return err == nil && bytes.Contains(raw, []byte(`"taskId": "task-1"`))
	})
	body := applyBody(e, "thread-s", map[string]any{"query": "Use the image's CIDR", "image_attachments": map[string]any{"items": []any{
		map[string]any{"bytes_base64": encoded, "size_bytes": len(img), "sha256": hex.EncodeToString(sum[:]), "media_type": "image/png", "filename": "net.png"}}}})
	body["receipt"].(map[string]any)["mode"] = "pipeline"
	callHandoff(t, url, http.MethodPost, "apply-input", body, "").is(t, 200, `{"status":"ALREADY_APPLIED","inputDigest":"digest-1"}`)
	close(release)
	pipeline.rest(t)
	if got := s.calls(); got != "[SendStreamingMessage handoff:apply-input SendStreamingMessage handoff:apply-input]" {
		t.Fatalf("A2A calls %s", got)
	}
	var send struct {
		Params struct {
			Message struct {
				MessageID string `json:"messageId"`
				TaskID    string `json:"taskId"`
				Parts     []map[string]any
				Metadata  struct {
					IacCode map[string]any `json:"iac_code"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(s.bodies[2]), &send); err != nil {
		t.Fatal(err)
	}
	m := send.Params.Message
	parts, _ := json.Marshal(m.Parts)
	wantParts := fmt.Sprintf(`[{"text":"Use the image's CIDR"},{"data":{"bytes":%q,"filename":"net.png"},"mediaType":"image/png"}]`, encoded)
	if m.MessageID != "guidance-1" || m.TaskID != "task-1" || string(parts) != wantParts {
		t.Fatalf("guidance message %s %s %s", m.MessageID, m.TaskID, parts)
	}
	md := m.Metadata.IacCode
	if md["guidance_id"] != "guidance-1" || md["input_digest"] != "digest-1" || md["iac_code_model"] != "model-x" || md["run_mode"] != "pipeline" || md["execution_fence"] == nil {
		t.Fatalf("guidance metadata %v", md)
	}
}
