package demoagent

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
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/fence"
)

// The session-handoff service's refusals (handoff.go); the hand-over
// itself runs between two binaries in e2e/handoff_test.go.

var (
	hoSource = map[string]any{"sandboxId": "sb-a", "activationId": "act-a", "runId": "run-a", "leaseId": "lease-a"}
	hoTarget = map[string]any{"sandboxId": "sb-b", "activationId": "act-b", "runId": "run-b", "leaseId": "lease-b"}
)

type handoffSide struct {
	h       *harness
	threads string
	fence   *fence.Fence
}

func newHandoffSide(t *testing.T, shared, backup string) *handoffSide {
	t.Helper()
	dir := t.TempDir()
	s := &handoffSide{threads: filepath.Join(dir, "threads"), fence: fence.New(filepath.Join(dir, "handoff-control"))}
	s.h = newHarness(t, Options{BackupDir: backup, Handoff: &HandoffOptions{SharedDir: shared, PrivateDir: filepath.Join(dir, "prepared"), Fence: s.fence,
		ThreadFile: func(id string) (string, error) { return filepath.Join(s.threads, id+".json"), nil }}})
	return s
}

func (s *handoffSide) op(op string, body any) (int, map[string]any) {
	s.h.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.h.srv.URL+"iac-code/handoff/"+op, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return res.StatusCode, m
}

func wantStatus(t *testing.T, code int, m map[string]any, status, reason string) {
	t.Helper()
	if code != 200 || m["status"] != status || (reason != "" && m["reason"] != reason) {
		t.Fatalf("got %d %v, want %s %s", code, m, status, reason)
	}
}

// TestHandoffService: what each operation refuses, and a delivered input
// answered ALREADY_APPLIED once the agent took it.
func TestHandoffService(t *testing.T) {
	shared, backup := t.TempDir(), t.TempDir()
	src, dst := newHandoffSide(t, shared, backup), newHandoffSide(t, shared, backup)
	if code, caps := src.h.get("/iac-code/handoff/capabilities"); code != 200 || caps["supported"] != true {
		t.Fatalf("capabilities %v", caps)
	}
	plain := newHarness(t, Options{})
	if code, _ := plain.get("/iac-code/handoff/capabilities"); code != 404 {
		t.Fatalf("without the service: %d", code)
	}

	// A question parks a pipeline task on the source.
	evs := src.h.stream("SendStreamingMessage", msgParams("ask me a question", "ctx-h", "", cwdMeta("/w"))).until(stateInputRequired)
	taskID := taskIDOf(evs)
	thread := map[string]any{"schemaVersion": 1, "threadId": "th-1", "contextId": "ctx-h", "cwd": "/w", "userId": "u-1",
		"execution": map[string]any{"executionId": "exec-1", "rosInvocationId": "ros-1", "taskId": taskID}}
	raw, _ := json.Marshal(thread)
	_ = os.MkdirAll(src.threads, 0o700)
	_ = os.WriteFile(filepath.Join(src.threads, "th-1.json"), raw, 0o600)
	prepare := map[string]any{"protocol": "agui", "userId": "u-1", "backendScope": "s", "sessionId": "sess", "cwd": "/w",
		"internalSessionId": "i", "contextId": "ctx-h", "mode": "pipeline", "source": hoSource, "migrationId": "m-1", "epoch": 1,
		"aguiIdentity": map[string]any{"threadId": "th-1", "executionId": "exec-1", "rosInvocationId": "ros-1"},
		"pendingInput": map[string]any{"query": "q"}, "inputDigest": "d-1", "guidanceId": "g-1"}

	if code, _ := src.op("prepare", map[string]any{"protocol": "agui"}); code != 400 {
		t.Fatalf("incomplete identity: %d", code)
	}
	code, m := src.op("prepare", prepare)
	wantStatus(t, code, m, "NOT_READY", "source_physical_owner_proof_missing")
	owner, _ := fence.CanonicalOwner(hoSource)
	if err := src.fence.Admit(fence.ThreadKey("th-1"), owner); err != nil {
		t.Fatal(err)
	}
	changed := map[string]any{}
	for k, v := range prepare {
		changed[k] = v
	}
	changed["cwd"] = "/other"
	code, m = src.op("prepare", changed)
	wantStatus(t, code, m, "CONFLICT", "agui_execution_binding_changed")

	code, m = dst.op("restore", map[string]any{"receipt": prepare, "target": hoTarget})
	wantStatus(t, code, m, "NOT_READY", "shared_commit_not_visible")
	code, m = src.op("prepare", prepare)
	wantStatus(t, code, m, "PREPARED", "")
	receipt := m["receipt"].(map[string]any)
	if receipt["recoveryKind"] != "input_required" || receipt["inputAcceptance"] != "NOT_APPLIED_CONFIRMED" {
		t.Fatalf("receipt %v", receipt)
	}
	if err := src.fence.Write(fence.ThreadKey("th-1"), 0, func() error { return nil }); err == nil {
		t.Fatal("the source can still write")
	}

	forged := map[string]any{}
	for k, v := range receipt {
		forged[k] = v
	}
	forged["mode"] = "normal"
	code, m = dst.op("restore", map[string]any{"receipt": forged, "target": hoTarget})
	wantStatus(t, code, m, "CONFLICT", "shared_receipt_changed")
	code, m = dst.op("restore", map[string]any{"receipt": receipt, "target": hoSource})
	wantStatus(t, code, m, "CONFLICT", "destination_is_source_owner")
	apply := map[string]any{"receipt": receipt, "target": hoTarget, "inputDigest": "d-1", "pendingInput": map[string]any{"query": "q"}}
	code, m = dst.op("apply-input", apply)
	wantStatus(t, code, m, "NOT_READY", "destination_not_authorized")
	code, m = dst.op("authorize", map[string]any{"receipt": receipt, "target": hoTarget, "commitId": "c-1"})
	wantStatus(t, code, m, "NOT_READY", "destination_not_prepared")
	code, m = dst.op("restore", map[string]any{"receipt": receipt, "target": hoTarget})
	wantStatus(t, code, m, "RESTORED", "")
	code, m = dst.op("authorize", map[string]any{"receipt": receipt, "target": hoTarget, "commitId": "c-1"})
	wantStatus(t, code, m, "AUTHORIZED", "")
	if got, _ := os.ReadFile(filepath.Join(dst.threads, "th-1.json")); !bytes.Equal(got, raw) {
		t.Fatalf("thread on the destination %s", got)
	}

	tampered := map[string]any{"receipt": receipt, "target": hoTarget, "inputDigest": "d-1", "pendingInput": map[string]any{"query": "other"}}
	code, m = dst.op("apply-input", tampered)
	wantStatus(t, code, m, "CONFLICT", "guidance_payload_changed")
	code, m = dst.op("apply-input", apply)
	wantStatus(t, code, m, "NOT_READY", "agui_input_delivery_required")

	// The adapter's delivery: the answer to the parked question, with the
	// handoff metadata.
	iac := map[string]any{"cwd": "/w", "guidance_id": "g-1", "input_digest": "d-1",
		"execution_fence": map[string]any{"version": "session-handoff-v1", "owner": hoTarget}}
	dst.h.stream("SendStreamingMessage", msgParams("two zones", "ctx-h", taskID, iac)).all()
	if n := dst.h.srv.Agent.HandoffDeliveries("ctx-h", "g-1"); n != 1 {
		t.Fatalf("deliveries %d", n)
	}
	code, m = dst.op("apply-input", apply)
	wantStatus(t, code, m, "ALREADY_APPLIED", "")
	if m["inputDigest"] != "d-1" || m["taskId"] != taskID || m["executionId"] != "exec-1" {
		t.Fatalf("ack %v", m)
	}
}

// TestHandoffHeldTurn: the "hand over" pipeline holds the frame that ends
// its turn at its checkpoint (the task already input-required) until the
// source's prepare committed the session; the destination restores the
// confirmation and takes a guidance with an image as its answer, once.
func TestHandoffHeldTurn(t *testing.T) {
	shared, backup := t.TempDir(), t.TempDir()
	src, dst := newHandoffSide(t, shared, backup), newHandoffSide(t, shared, backup)
	s := src.h.stream("SendStreamingMessage", msgParams("hand over", "ctx-g", "", cwdMeta("/w")))
	defer s.close()
	evs := s.until(stateWorking)
	taskID := taskIDOf(evs)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := src.h.call("GetTask", map[string]any{"id": taskID})["result"].(map[string]any)["status"].(map[string]any)["state"]
		if st == stateInputRequired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task still %v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	thread := map[string]any{"schemaVersion": 1, "threadId": "th-2", "contextId": "ctx-g", "cwd": "/w", "userId": "u-1",
		"execution": map[string]any{"executionId": "exec-2", "rosInvocationId": "ros-2", "taskId": taskID, "pending": map[string]any{}}}
	raw, _ := json.Marshal(thread)
	_ = os.MkdirAll(src.threads, 0o700)
	_ = os.WriteFile(filepath.Join(src.threads, "th-2.json"), raw, 0o600)
	owner, _ := fence.CanonicalOwner(hoSource)
	if err := src.fence.Admit(fence.ThreadKey("th-2"), owner); err != nil {
		t.Fatal(err)
	}
	pending := map[string]any{"query": "use 10.0.0.0/16"}
	prepare := map[string]any{"protocol": "agui", "userId": "u-1", "backendScope": "s", "sessionId": "sess-2", "cwd": "/w",
		"internalSessionId": "i", "contextId": "ctx-g", "mode": "pipeline", "source": hoSource, "migrationId": "m-2", "epoch": 1,
		"aguiIdentity": map[string]any{"threadId": "th-2", "executionId": "exec-2", "rosInvocationId": "ros-2"},
		"pendingInput": pending, "inputDigest": "d-2", "guidanceId": "g-2"}
	code, m := src.op("prepare", prepare)
	wantStatus(t, code, m, "PREPARED", "")
	receipt := m["receipt"].(map[string]any)
	if receipt["recoveryKind"] != "input_required" {
		t.Fatalf("receipt %v", receipt)
	}
	// Released: the turn ends on the pause confirmation, without input.
	rest := s.all()
	if last := rest[len(rest)-1]; stateOf(last) != stateInputRequired || iacOf(last)["input"] != nil {
		t.Fatalf("end of the held turn %s", last.raw)
	}

	code, m = dst.op("restore", map[string]any{"receipt": receipt, "target": hoTarget})
	wantStatus(t, code, m, "RESTORED", "")
	code, m = dst.op("authorize", map[string]any{"receipt": receipt, "target": hoTarget, "commitId": "c-2"})
	wantStatus(t, code, m, "AUTHORIZED", "")
	apply := map[string]any{"receipt": receipt, "target": hoTarget, "inputDigest": "d-2", "pendingInput": pending}
	code, m = dst.op("apply-input", apply)
	wantStatus(t, code, m, "NOT_READY", "agui_input_delivery_required")

	// The adapter's delivery: an active guidance naming the task, with an
	// image part as the adapter sends it.
	img := []byte("\x89PNG\r\n\x1a\n-net")
	sum := sha256.Sum256(img)
	params := msgParams("use 10.0.0.0/16", "ctx-g", taskID, map[string]any{"cwd": "/w", "guidance_id": "g-2", "input_digest": "d-2",
		"execution_fence": map[string]any{"version": "session-handoff-v1", "owner": hoTarget}})
	msg := params["message"].(map[string]any)
	msg["parts"] = append(msg["parts"].([]any), map[string]any{"data": map[string]any{"bytes": base64.StdEncoding.EncodeToString(img),
		"filename": "net.png"}, "mediaType": "image/png"})
	out := dst.h.stream("SendStreamingMessage", params).all()
	var received, applied []any
	lastSeq := -1.0
	for _, ev := range out {
		for _, env := range envelopesOf(ev) {
			// The adapter drops an envelope whose sequence is at or below
			// its cursor (mapper.liveEnvelope): the sequences must rise.
			if seq, _ := env["sequence"].(float64); seq <= lastSeq {
				t.Fatalf("continuation: %s has sequence %v after %v", env["eventType"], seq, lastSeq)
			} else {
				lastSeq = seq
			}
			data, _ := env["data"].(map[string]any)
			switch env["eventType"] {
			case "input_received":
				received = append(received, data["images"])
			case "text_delta":
				if data["text"] == "Guidance applied: use 10.0.0.0/16" {
					applied = append(applied, data["text"])
				}
			}
		}
	}
	wantImages := fmt.Sprintf(`[[{"filename":"net.png","mediaType":"image/png","sha256":"%s","sizeBytes":%d}]]`, hex.EncodeToString(sum[:]), len(img))
	if got, _ := json.Marshal(received); string(got) != wantImages || len(applied) != 1 || stateOf(out[len(out)-1]) != stateCompleted {
		t.Fatalf("continuation: received %s (want %s), applied %v, last %s", got, wantImages, applied, out[len(out)-1].raw)
	}
	if n := dst.h.srv.Agent.HandoffDeliveries("ctx-g", "g-2"); n != 1 {
		t.Fatalf("deliveries %d", n)
	}
	code, m = dst.op("apply-input", apply)
	wantStatus(t, code, m, "ALREADY_APPLIED", "")
}

// envelopesOf returns the pipeline envelopes of a frame, batched or not.
func envelopesOf(ev sseEvent) []map[string]any {
	iac := iacOf(ev)
	if env, ok := iac["pipeline"].(map[string]any); ok {
		return []map[string]any{env}
	}
	batch, _ := iac["pipelineBatch"].(map[string]any)
	var out []map[string]any
	for _, e := range batch["events"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}
