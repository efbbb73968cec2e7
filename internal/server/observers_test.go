package server_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Observers (protocol.md §7.2) seeded like the original's, and the
// route's refusals in {"error": <text>}.

// texts returns the TEXT_MESSAGE_CONTENT deltas of evs, in order.
func texts(evs []map[string]any) []string {
	var out []string
	for _, ev := range evs {
		if ev["type"] == "TEXT_MESSAGE_CONTENT" {
			out = append(out, ev["delta"].(string))
		}
	}
	return out
}

// threadDoc reads a thread's document from the state directory.
func threadDoc(t *testing.T, e *env, threadID string) map[string]any {
	t.Helper()
	key, err := state.FileKey(threadID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(e.StateDir, "threads", key+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestObserversSeeEachTextOnce: an observer that joins mid-turn (at the
// permission wait, the A2A turn still open) and one that joins the
// resumed turn each see every text exactly once: nothing the thread
// already has (its textSnapshotDigests), and each new text once. The
// agent pauses between frames so that the second observer joins while the
// resumed turn is still running.
func TestObserversSeeEachTextOnce(t *testing.T) {
	e := newEnv(t, envOptions{stepDelay: 150 * time.Millisecond})
	const th = "thread-observers"
	const first = "I need to inspect the workspace first."
	reply := "The workspace is " + filepath.Join(e.Root, "ws") + "."

	r := post(t, e.URL, e.body(th, "run-1", "run pwd, permission please", nil), nil)
	its := interrupts(t, r)
	if got := texts(r.Events); !slices.Equal(got, []string{first}) {
		t.Fatalf("run-1 texts %q", got)
	}
	exec := sessionOf(t, r.Events)["executionId"].(string)
	// The thread has the text: its digest is durable.
	sum := sha256.Sum256([]byte(first))
	ex := threadDoc(t, e, th)["execution"].(map[string]any)
	if ds, _ := ex["textSnapshotDigests"].([]any); !slices.Contains(ds, any(hex.EncodeToString(sum[:]))) {
		t.Fatalf("textSnapshotDigests %v lack the first text's digest", ds)
	}

	// Mid-turn: the observer sees the wait, not the text again.
	o := post(t, subscribeURL(e, exec), map[string]any{"threadId": th, "runId": "run-1", "rosInvocationId": "invocation-1"}, nil)
	if o.Status != 200 {
		t.Fatalf("observe: %d %s", o.Status, o.Body)
	}
	if got := texts(o.Events); len(got) != 0 {
		t.Fatalf("mid-turn observer got texts %q, want none (the thread has them)", got)
	}
	fin := last(o.Events)
	out, _ := fin["outcome"].(map[string]any)
	got, _ := out["interrupts"].([]any)
	if fin["type"] != "RUN_FINISHED" || out["type"] != "interrupt" || len(got) != 1 || got[0].(map[string]any)["id"] != its[0]["id"] {
		t.Fatalf("mid-turn observer ended %v (%v)", fin, types(o.Events))
	}
	assertBalanced(t, o.Events)

	// After the resume: the answer was accepted (the tool result is
	// out), the turn goes on, and the observer follows it to its end.
	run := openStream(t, e.URL, resumeBody(e, th, "run-2", allow(its[0]["id"])))
	run.waitFor(t, "TOOL_CALL_RESULT")
	o2 := openStream(t, subscribeURL(e, exec), map[string]any{"threadId": th, "runId": "run-2", "rosInvocationId": "invocation-1"})
	end := o2.rest(t)
	// The first text of a resumed run starts with a paragraph break
	// (protocol.md §4.7), for the observer as for the run itself.
	if got := texts(o2.events); !slices.Equal(got, []string{"\n\n" + reply}) {
		t.Fatalf("observer after the resume got texts %q, want [%q] (%v)", got, "\n\n"+reply, types(o2.events))
	}
	if end["type"] != "RUN_FINISHED" || end["outcome"].(map[string]any)["type"] != "success" || end["runId"] != "run-2" {
		t.Fatalf("observer after the resume ended %v", end)
	}
	assertBalanced(t, o2.events)
	if end := run.rest(t); end["type"] != "RUN_FINISHED" {
		t.Fatalf("resumed run ended %v", end)
	}
	if got := texts(run.events); !slices.Equal(got, []string{"\n\n" + reply}) {
		t.Fatalf("resumed run texts %q", got)
	}
}

// postRaw sends body with exactly the headers given (none added).
func postRaw(t *testing.T, url string, body []byte, hdr map[string]string) *response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	r := &response{Status: res.StatusCode, Header: res.Header, Body: buf.Bytes()}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		r.Raw = buf.String()
		r.Events = parseSSE(t, r.Raw)
	}
	return r
}

// TestSubscribeRefusalShapes: every refusal of the subscribe route is
// {"error": <text>} with the status of §7.2; authentication compares the
// whole header (§2.3); any Content-Type is taken, as by the original; the
// body stays bounded (docs/decisions.md, "Subscribe route refusals").
func TestSubscribeRefusalShapes(t *testing.T) {
	e := newEnv(t, envOptions{authToken: "secret-token"})
	const th = "thread-refusals"
	bearer := map[string]string{"Authorization": "Bearer secret-token"}
	r := post(t, e.URL, e.body(th, "run-1", "run pwd, permission please", nil), bearer)
	interrupts(t, r)
	exec := sessionOf(t, r.Events)["executionId"].(string)
	url := subscribeURL(e, exec)
	ident := `{"threadId":"` + th + `","runId":"run-1","rosInvocationId":"invocation-1"}`

	cases := []struct {
		name   string
		url    string
		body   string
		hdr    map[string]string
		status int
		want   string
	}{
		{"no token", url, ident, map[string]string{"Content-Type": "application/json"}, 401, `{"error":"Unauthorized"}`},
		{"lowercase bearer", url, ident, map[string]string{"Content-Type": "application/json", "Authorization": "bearer secret-token"}, 401, `{"error":"Unauthorized"}`},
		{"wrong token", url, ident, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer secret-tokeN"}, 401, `{"error":"Unauthorized"}`},
		{"two spaces", url, ident, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer  secret-token"}, 401, `{"error":"Unauthorized"}`},
		{"bad identity", url, `{"threadId":"` + th + `","runId":"run-1"}`, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer secret-token"}, 400, `{"error":"Invalid observation identity"}`},
		{"not JSON", url, `{"threadId":`, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer secret-token"}, 400, `{"error":"Invalid observation identity"}`},
		{"unavailable", url, `{"threadId":"thread-none","runId":"run-1","rosInvocationId":"invocation-1"}`, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer secret-token"}, 404, `{"error":"Execution checkpoint unavailable"}`},
		{"changed identity", subscribeURL(e, "other-execution"), ident, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer secret-token"}, 409, `{"error":"Execution observation identity changed"}`},
		{"unknown run", url, `{"threadId":"` + th + `","runId":"run-9","rosInvocationId":"invocation-1"}`, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer secret-token"}, 409, `{"error":"Execution observation identity changed"}`},
		{"oversized", url, `{"threadId":"` + strings.Repeat("x", 64<<10) + `","runId":"run-1","rosInvocationId":"invocation-1"}`, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer secret-token"}, 413, `{"error":"The AG-UI request body is too large."}`},
		// The original reads any Content-Type as JSON: these are served.
		{"text/plain", url, `{"threadId":"thread-none","runId":"run-1","rosInvocationId":"invocation-1"}`, map[string]string{"Content-Type": "text/plain", "Authorization": "Bearer secret-token"}, 404, `{"error":"Execution checkpoint unavailable"}`},
		{"no Content-Type", url, `{"threadId":"thread-none","runId":"run-1","rosInvocationId":"invocation-1"}`, map[string]string{"Authorization": "Bearer secret-token"}, 404, `{"error":"Execution checkpoint unavailable"}`},
		// A UTF-8 byte-order mark is dropped, as by json.loads of bytes.
		{"BOM", url, "\ufeff" + `{"threadId":"thread-none","runId":"run-1","rosInvocationId":"invocation-1"}`, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer secret-token"}, 404, `{"error":"Execution checkpoint unavailable"}`},
	}
	for _, c := range cases {
		r := postRaw(t, c.url, []byte(c.body), c.hdr)
		if r.Status != c.status || string(r.Body) != c.want+"\n" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q (%s), want %d %s", c.name, r.Status, r.Body, r.Header.Get("Content-Type"), c.status, c.want)
		}
	}
	// A text/plain observation with the right identity streams.
	o := postRaw(t, url, []byte(ident), map[string]string{"Content-Type": "text/plain", "Authorization": "Bearer secret-token"})
	if o.Status != 200 || last(o.Events)["type"] != "RUN_FINISHED" {
		t.Fatalf("text/plain observation: %d %s", o.Status, o.Body)
	}
	// POST / keeps its own rule (§2.3): the scheme in any letter case.
	lower := post(t, e.URL, e.body("thread-lower", "run-1", "Create a VPC template", nil), map[string]string{"Authorization": "bearer secret-token"})
	assertSuccess(t, lower)
}

// TestSubscribeBodyAndHostRefusals: the refusals that are ours on the
// subscribe route keep its {"error": <text>} shape, with the English
// message of the same refusal elsewhere (docs/decisions.md, "Subscribe
// route refusals"): a body never sent (408), a body that ends early (400,
// as a body that is not JSON) and a Host this server does not answer to
// (403).
func TestSubscribeBodyAndHostRefusals(t *testing.T) {
	e := newEnv(t, envOptions{authToken: "s3cret", bodyTimeout: 300 * time.Millisecond})
	path := "/extensions/iac-code/v1/executions/x/subscribe"
	head := "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nContent-Length: 20000\r\n\r\n"
	res, closed, _ := rawExchange(t, e.URL, head, "", 0)
	if b, _ := io.ReadAll(res.Body); res.StatusCode != 408 || string(b) != `{"error":"The request body was not received in time."}`+"\n" || !closed {
		t.Fatalf("body never sent: %d %q (closed %v)", res.StatusCode, b, closed)
	}

	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(e.URL, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer s3cret\r\nContent-Length: 100\r\n\r\n{\"threadId\":")
	_ = conn.(*net.TCPConn).CloseWrite()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(res.Body); res.StatusCode != 400 || string(b) != `{"error":"Invalid observation identity"}`+"\n" {
		t.Fatalf("body that ends early: %d %q", res.StatusCode, b)
	}

	req, _ := http.NewRequest(http.MethodPost, e.URL+strings.TrimPrefix(path, "/"), strings.NewReader(`{}`))
	req.Host = "evil.example"
	req.Header.Set("Authorization", "Bearer s3cret")
	hres, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer hres.Body.Close()
	if b, _ := io.ReadAll(hres.Body); hres.StatusCode != 403 ||
		string(b) != `{"error":"The request's Host is not one this server answers to (see --allowed-hosts)."}`+"\n" {
		t.Fatalf("foreign Host: %d %q", hres.StatusCode, b)
	}
}
