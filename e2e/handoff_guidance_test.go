package e2e

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

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// TestHandoffGuidanceImage: a guidance with an image, kept by the
// orchestrator for a session while sandbox A ends its turn ("hand over",
// docs/demo-agent.md), is handed to sandbox B and delivered there once, as
// an active guidance that answers the restored pause confirmation. An
// image whose bytes do not match their digest is refused and delivers
// nothing; a repeated apply-input delivers nothing more; A delivers and
// writes nothing after prepare.
func TestHandoffGuidanceImage(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	shared, backup := t.TempDir(), t.TempDir()
	a := startSandbox(t, root, shared, backup)
	b := startSandbox(t, root, shared, backup)
	const th, query, guidanceID = "handoff-thread-2", "Use the CIDR in the attached image", "handoff-guidance-1"
	cwd := filepath.Join(root, "ws")
	iac := map[string]any{"schemaVersion": 1, "rosInvocationId": "invocation-2", "cwd": cwd, "userId": "user-1",
		"runMode": "pipeline", "executionFence": map[string]any{"version": "session-handoff-v1", "owner": ownerA}}
	body := func(runID, text string, extra map[string]any) map[string]any {
		ic := map[string]any{}
		for k, v := range iac {
			ic[k] = v
		}
		for k, v := range extra {
			ic[k] = v
		}
		return map[string]any{"threadId": th, "runId": runID, "state": map[string]any{}, "tools": []any{}, "context": []any{},
			"messages": []any{map[string]any{"id": "m-" + runID, "role": "user", "content": text}}, "forwardedProps": map[string]any{"iacCode": ic}}
	}

	// The turn on A stops at its checkpoint and holds the frame that ends
	// it until A's prepare committed the session.
	type answer struct {
		code int
		body []byte
		err  error
	}
	turn, ended := make(chan answer, 1), make(chan struct{})
	t.Cleanup(func() { <-ended }) // before the servers stop: the hold ends within 30 s
	go func() {
		defer close(ended)
		raw, _ := json.Marshal(body("run-1", "Deploy the network, then hand over", nil))
		res, err := http.Post(a.URL, "application/json", bytes.NewReader(raw))
		if err != nil {
			turn <- answer{err: err}
			return
		}
		defer res.Body.Close()
		got, err := io.ReadAll(res.Body)
		turn <- answer{code: res.StatusCode, body: got, err: err}
	}()
	threadA := filepath.Join(a.StateDir, "threads", th+".json")
	var doc, exec map[string]any
	waitFor(t, "A's thread names its task", func() bool {
		raw, err := os.ReadFile(threadA)
		if err != nil || json.Unmarshal(raw, &doc) != nil {
			return false
		}
		exec, _ = doc["execution"].(map[string]any)
		return exec["taskId"] != nil && doc["iacCodeSessionId"] != nil
	})

	img := []byte("\x89PNG\r\n\x1a\n-network-diagram-10.0.0.0/16")
	sum := sha256.Sum256(img)
	encoded := base64.StdEncoding.EncodeToString(img)
	pending := map[string]any{"query": query, "image_attachments": map[string]any{"items": []any{map[string]any{
		"bytes_base64": encoded, "size_bytes": len(img), "sha256": hex.EncodeToString(sum[:]), "media_type": "image/png", "filename": "net.png"}}}}
	prepare := map[string]any{
		"protocol": "agui", "userId": "user-1", "backendScope": "scope-1", "sessionId": "session-2", "cwd": cwd,
		"internalSessionId": doc["iacCodeSessionId"], "contextId": doc["contextId"], "mode": "pipeline", "source": ownerA,
		"migrationId": "migration-2", "epoch": 1, "pendingInput": pending, "inputDigest": "digest-2", "guidanceId": guidanceID,
		"aguiIdentity": map[string]any{"threadId": th, "executionId": exec["executionId"], "rosInvocationId": "invocation-2"},
	}
	// Until the checkpoint the task works: prepare is NOT_READY.
	var receipt map[string]any
	waitFor(t, "A's prepare", func() bool {
		code, raw := postJSONTo(t, a.URL+"iac-code/handoff/prepare", prepare)
		var ans map[string]any
		if code != 200 || json.Unmarshal(raw, &ans) != nil {
			t.Fatalf("prepare: %d %s", code, raw)
		}
		if ans["status"] == "NOT_READY" {
			return false
		}
		if ans["status"] != "PREPARED" {
			t.Fatalf("prepare: %s", raw)
		}
		receipt = ans["receipt"].(map[string]any)
		return true
	})
	if receipt["recoveryKind"] != "input_required" || receipt["inputAcceptance"] != "NOT_APPLIED_CONFIRMED" || receipt["taskId"] != exec["taskId"] {
		t.Fatalf("receipt %v", receipt)
	}
	var first answer
	select {
	case first = <-turn:
	case <-time.After(30 * time.Second):
		t.Fatal("the turn on A did not end after prepare")
	}
	if first.err != nil || first.code != 200 {
		t.Fatalf("turn on A: %v %d %s", first.err, first.code, first.body)
	}
	// The turn ends at the pause confirmation (success); its closing write
	// is best effort (protocol.md §4.4) and the frozen fence refuses it.
	evs := e2etest.Events(first.body)
	if last := evs[len(evs)-1]; last["type"] != "RUN_FINISHED" || fmt.Sprint(last["outcome"]) != "map[type:success]" {
		t.Fatalf("turn on A ended with %v", last)
	}
	// A frozen source admits nothing, the guidance included.
	guidanceOnA := body("run-2", query, map[string]any{"activeGuidance": true})
	if code, raw := postJSONTo(t, a.URL, guidanceOnA); code != 400 || !bytes.Contains(raw, []byte(`"INVALID_INPUT"`)) {
		t.Fatalf("guidance on the frozen source: %d %s", code, raw)
	}

	handoffOp(t, b, "restore", map[string]any{"receipt": receipt, "target": ownerB}, "RESTORED")
	handoffOp(t, b, "authorize", map[string]any{"receipt": receipt, "target": ownerB, "commitId": "ros-commit-2"}, "AUTHORIZED")
	threadB := filepath.Join(b.StateDir, "threads", th+".json")
	copied, _ := os.ReadFile(threadB)
	if onA, _ := os.ReadFile(threadA); !bytes.Equal(onA, copied) {
		t.Fatalf("A wrote its thread after prepare:\nA %s\nB %s", onA, copied)
	}
	if execB := readJSONFile(t, threadB)["execution"].(map[string]any); execB["taskId"] != exec["taskId"] || len(execB["pending"].(map[string]any)) != 0 {
		t.Fatalf("copied execution %v", execB)
	}

	apply := map[string]any{"receipt": receipt, "target": ownerB, "inputDigest": "digest-2", "pendingInput": pending,
		"callerMetadata": map[string]any{"iac_code": map[string]any{"iac_code_model": "demo-model"}}}
	// Bytes that do not match the checkpointed digest: refused, nothing
	// delivered.
	tampered := map[string]any{}
	for k, v := range pending {
		tampered[k] = v
	}
	tampered["image_parts"] = []any{map[string]any{"bytes_base64": base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n-other-image"))}}
	bad := map[string]any{}
	for k, v := range apply {
		bad[k] = v
	}
	bad["pendingInput"] = tampered
	if code, raw := postJSONTo(t, b.URL+"iac-code/handoff/apply-input", bad); code != 400 || !bytes.Equal(bytes.TrimSpace(raw), []byte(`{"error":"Invalid handoff request"}`)) {
		t.Fatalf("tampered image: %d %s", code, raw)
	}
	if now, _ := os.ReadFile(threadB); !bytes.Equal(now, copied) {
		t.Fatal("a refused input changed the thread on B")
	}

	ack := handoffOp(t, b, "apply-input", apply, "ALREADY_APPLIED")
	if ack["inputDigest"] != "digest-2" || ack["taskId"] != exec["taskId"] || ack["executionId"] != exec["executionId"] {
		t.Fatalf("apply-input %v", ack)
	}
	onB := readJSONFile(t, threadB)
	if _, ok := onB["runDigests"].(map[string]any)[guidanceID]; !ok || len(onB["execution"].(map[string]any)["pending"].(map[string]any)) != 0 {
		t.Fatalf("thread on B: %v", onB)
	}
	// What B's agent received, from its session backup: the pipeline ended
	// on B, the text and the image (as received: size and digest) once.
	session := doc["iacCodeSessionId"].(string)
	wantImages := fmt.Sprintf(`[{"filename":"net.png","mediaType":"image/png","sha256":"%s","sizeBytes":%d}]`, hex.EncodeToString(sum[:]), len(img))
	received := func() (state string, inputs, applied int, images string) {
		f := readJSONFile(t, filepath.Join(backup, session+".json"))
		for _, raw := range f["tasks"].([]any) {
			task := raw.(map[string]any)
			if task["taskId"] != exec["taskId"] {
				continue
			}
			state = task["status"].(map[string]any)["state"].(string)
			for _, ev := range task["journal"].([]any) {
				env := ev.(map[string]any)
				data, _ := env["data"].(map[string]any)
				switch {
				case env["eventType"] == "input_received":
					inputs++
					desc, _ := json.Marshal(data["images"])
					images = string(desc)
					if data["userInputLength"] != float64(len(query)) {
						t.Fatalf("input_received %v", data)
					}
				case env["eventType"] == "text_delta" && data["text"] == "Guidance applied: "+query:
					applied++
				}
			}
		}
		return
	}
	if st, n, m, imgs := received(); st != "TASK_STATE_COMPLETED" || n != 1 || m != 1 || imgs != wantImages {
		t.Fatalf("received on B: state %s, inputs %d, applied %d, images %s; want %s", st, n, m, imgs, wantImages)
	}

	before, _ := os.ReadFile(threadB)
	handoffOp(t, b, "apply-input", apply, "ALREADY_APPLIED")
	if after, _ := os.ReadFile(threadB); !bytes.Equal(before, after) {
		t.Fatal("a repeated apply-input changed the thread")
	}
	if _, n, m, _ := received(); n != 1 || m != 1 {
		t.Fatalf("a repeated apply-input delivered again: inputs %d, applied %d", n, m)
	}
}

// waitFor polls cond until it holds, failing after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
