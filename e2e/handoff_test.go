package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// A session handed over between two sandboxes, each one binary with its
// embedded agent (protocol.md §7.3, §8.9): they share the handoff store
// (IAC_CODE_HANDOFF_SHARED_DIR), the session backup
// (IAC_CODE_CONFIG_BACKUP_DIR) and the workspace path, and nothing else.

var (
	ownerA = map[string]any{"sandboxId": "sandbox-a", "activationId": "act-a", "runId": "run-a", "leaseId": "lease-a"}
	ownerB = map[string]any{"sandboxId": "sandbox-b", "activationId": "act-b", "runId": "run-b", "leaseId": "lease-b"}
)

func startSandbox(t *testing.T, root, shared, backup string) *Server {
	t.Helper()
	cfg := t.TempDir()
	return startServerIn(t, e2etest.FreePort(t), root, filepath.Join(cfg, "agui"), nil,
		"IAC_CODE_HANDOFF_SHARED_DIR="+shared, "IAC_CODE_CONFIG_DIR="+cfg, "IAC_CODE_CONFIG_BACKUP_DIR="+backup)
}

func postJSONTo(t *testing.T, url string, body any) (int, []byte) {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func handoffOp(t *testing.T, s *Server, op string, body any, wantStatus string) map[string]any {
	t.Helper()
	code, b := postJSONTo(t, s.URL+"iac-code/handoff/"+op, body)
	var ans map[string]any
	if err := json.Unmarshal(b, &ans); err != nil || code != 200 || ans["status"] != wantStatus {
		t.Fatalf("%s: %d %s, want %s", op, code, b, wantStatus)
	}
	return ans
}

func readJSONFile(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestHandoffWaitingInterrupt: a pipeline question asked on sandbox A is
// answered on sandbox B. The answer the orchestrator took on A is
// delivered once by B's adapter, the pipeline ends on B, A can no longer
// write or admit the thread, and a repeated apply-input delivers nothing.
func TestHandoffWaitingInterrupt(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	shared, backup := t.TempDir(), t.TempDir()
	a := startSandbox(t, root, shared, backup)
	b := startSandbox(t, root, shared, backup)

	caps := handoffCaps(t, a)
	if caps["supported"] != true || fmt.Sprint(caps["protocols"]) != "[a2a agui]" || caps["version"] != "session-handoff-v1" {
		t.Fatalf("capabilities %v", caps)
	}
	const th = "handoff-thread-1"
	cwd := filepath.Join(root, "ws")
	iac := map[string]any{"schemaVersion": 1, "rosInvocationId": "invocation-1", "cwd": cwd, "userId": "user-1",
		"runMode": "pipeline", "executionFence": map[string]any{"version": "session-handoff-v1", "owner": ownerA}}
	run := func(s *Server, runID, text string, iac map[string]any) (int, []map[string]any, []byte) {
		code, body := postJSONTo(t, s.URL, map[string]any{"threadId": th, "runId": runID, "state": map[string]any{},
			"messages": []any{map[string]any{"id": "m-" + runID, "role": "user", "content": text}}, "tools": []any{}, "context": []any{},
			"forwardedProps": map[string]any{"iacCode": iac}})
		return code, e2etest.Events(body), body
	}
	code, evs, raw := run(a, "run-1", "Ask me a question about the network", iac)
	fin := evs[len(evs)-1]
	outcome, _ := fin["outcome"].(map[string]any)
	if code != 200 || outcome["type"] != "interrupt" {
		t.Fatalf("first run: %d %s", code, raw)
	}
	interruptID := outcome["interrupts"].([]any)[0].(map[string]any)["id"]
	doc := readJSONFile(t, filepath.Join(a.StateDir, "threads", th+".json"))
	exec := doc["execution"].(map[string]any)

	pending := map[string]any{"interrupt_responses": []any{map[string]any{"interruptId": interruptID, "status": "resolved",
		"payload": map[string]any{"freeText": "Use two zones"}}}}
	prepared := handoffOp(t, a, "prepare", map[string]any{
		"protocol": "agui", "userId": "user-1", "backendScope": "scope-1", "sessionId": "session-1", "cwd": cwd,
		"internalSessionId": doc["iacCodeSessionId"], "contextId": doc["contextId"], "mode": "pipeline", "source": ownerA,
		"migrationId": "migration-1", "epoch": 1, "pendingInput": pending, "inputDigest": "digest-1", "guidanceId": "handoff-input-1",
		"aguiIdentity": map[string]any{"threadId": th, "executionId": exec["executionId"], "rosInvocationId": "invocation-1"},
	}, "PREPARED")
	receipt := prepared["receipt"].(map[string]any)
	if receipt["recoveryKind"] != "input_required" || receipt["inputAcceptance"] != "NOT_APPLIED_CONFIRMED" || receipt["taskId"] != exec["taskId"] {
		t.Fatalf("receipt %v", receipt)
	}
	// The source is frozen: no admission, whatever the owner.
	if code, _, raw := run(a, "run-2", "Create a VPC", iac); code != 400 || !bytes.Contains(raw, []byte(`"INVALID_INPUT"`)) {
		t.Fatalf("admission on the frozen source: %d %s", code, raw)
	}

	handoffOp(t, b, "restore", map[string]any{"receipt": receipt, "target": ownerB}, "RESTORED")
	handoffOp(t, b, "authorize", map[string]any{"receipt": receipt, "target": ownerB, "commitId": "ros-commit-1"}, "AUTHORIZED")
	apply := map[string]any{"receipt": receipt, "target": ownerB, "inputDigest": "digest-1", "pendingInput": pending,
		"callerMetadata": map[string]any{"iac_code": map[string]any{"iac_code_model": "demo-model"}}}
	ack := handoffOp(t, b, "apply-input", apply, "ALREADY_APPLIED")
	if ack["inputDigest"] != "digest-1" || ack["taskId"] != exec["taskId"] || ack["executionId"] != exec["executionId"] {
		t.Fatalf("apply-input %v", ack)
	}
	// Delivered exactly once: the thread on B has the one run and the one
	// applied answer, and the pipeline ended there.
	onB := readJSONFile(t, filepath.Join(b.StateDir, "threads", th+".json"))
	if _, ok := onB["runDigests"].(map[string]any)["handoff-input-1"]; !ok || len(onB["appliedResumeDigests"].([]any)) != 1 {
		t.Fatalf("thread on B: runs %v, applied %v", onB["runDigests"], onB["appliedResumeDigests"])
	}
	execB := onB["execution"].(map[string]any)
	if len(execB["pending"].(map[string]any)) != 0 || execB["taskId"] != nil || execB["lastTaskId"] != exec["taskId"] {
		t.Fatalf("execution on B %v", execB)
	}
	before, _ := os.ReadFile(filepath.Join(b.StateDir, "threads", th+".json"))
	handoffOp(t, b, "apply-input", apply, "ALREADY_APPLIED")
	if after, _ := os.ReadFile(filepath.Join(b.StateDir, "threads", th+".json")); !bytes.Equal(before, after) {
		t.Fatal("a repeated apply-input changed the thread")
	}

	// B admits the thread for its own owner only.
	iacB := map[string]any{}
	for k, v := range iac {
		iacB[k] = v
	}
	delete(iacB, "executionFence")
	if code, _, raw := run(b, "run-3", "Create a VPC", iacB); code != 400 {
		t.Fatalf("admission without an owner: %d %s", code, raw)
	}
	iacB["runMode"] = "normal"
	iacB["executionFence"] = map[string]any{"version": "session-handoff-v1", "owner": ownerA}
	if code, _, raw := run(b, "run-4", "Create a VPC", iacB); code != 400 {
		t.Fatalf("admission for the old owner: %d %s", code, raw)
	}
	iacB["executionFence"] = map[string]any{"version": "session-handoff-v1", "owner": ownerB}
	if code, evs, raw := run(b, "run-5", "Create a VPC", iacB); code != 200 || evs[len(evs)-1]["type"] != "RUN_FINISHED" {
		t.Fatalf("a new turn on B: %d %s", code, raw)
	}
}

func handoffCaps(t *testing.T, s *Server) map[string]any {
	t.Helper()
	res, err := http.Get(s.URL + "iac-code/handoff/capabilities")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return m
}
