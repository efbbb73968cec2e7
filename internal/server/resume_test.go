package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

func allow(id any) map[string]any {
	return map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}
}

// TestBackupNotReady: a resume while A2A's session backup synchronises gets
// the retryable SESSION_BACKUP_NOT_READY, nothing reaches A2A, the
// interrupt stays pending, and the retry succeeds (protocol.md §5.6 step 2).
func TestBackupNotReady(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-backup"
	it := interrupts(t, post(t, e.URL, e.body(th, "run-1", "permission, backup not ready", nil), nil))[0]
	r := post(t, e.URL, resumeBody(e, th, "run-2", allow(it["id"])), nil)
	fin := last(r.Events)
	if fin["code"] != "SESSION_BACKUP_NOT_READY" || fin["message"] != "Session backup is still synchronizing. Retry after 3 seconds." {
		t.Fatalf("got %v", fin)
	}
	if n := countCalls(e.Agent.Calls(), "SendStreamingMessage", `"kind":"permission"`); n != 0 {
		t.Fatalf("the answer reached A2A %d times before the session was restored", n)
	}
	r = post(t, e.URL, resumeBody(e, th, "run-3", allow(it["id"])), nil)
	if fin := last(r.Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("retry: %v", fin)
	}
}

// TestSidebandPermission: a candidate-scope permission is answered with a
// non-streaming SendMessage (protocol.md §5.8).
func TestSidebandPermission(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-sideband"
	pipe := map[string]any{"runMode": "pipeline"}
	it := interrupts(t, post(t, e.URL, e.body(th, "run-1", "sideband", pipe), nil))[0]
	if it["reason"] != "tool_call" {
		t.Fatalf("interrupt %v", it)
	}
	b := resumeBody(e, th, "run-2", allow(it["id"]))
	b["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["runMode"] = "pipeline"
	r := post(t, e.URL, b, nil)
	if fin := last(r.Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("resume: %v %v", types(r.Events), fin)
	}
	assertBalanced(t, r.Events)
	if n := countCalls(e.Agent.Calls(), "SendMessage", `"kind":"permission"`); n != 1 {
		t.Fatalf("SendMessage permission answers: %d, want 1", n)
	}
	if n := countCalls(e.Agent.Calls(), "SendStreamingMessage", `"kind":"permission"`); n != 0 {
		t.Fatalf("a sideband answer must not be streamed (%d)", n)
	}
}

// TestResumeAfterCompletion: once the execution has no pending interrupt, a
// different answer finds no task to resume.
func TestResumeAfterCompletion(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-after"
	it := interrupts(t, post(t, e.URL, e.body(th, "run-1", "permission", nil), nil))[0]
	if fin := last(post(t, e.URL, resumeBody(e, th, "run-2", allow(it["id"])), nil).Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("resume: %v", fin)
	}
	deny := map[string]any{"interruptId": it["id"], "status": "resolved", "payload": map[string]any{"decision": "deny"}}
	r := post(t, e.URL, resumeBody(e, th, "run-3", deny), nil)
	if fin := last(r.Events); fin["code"] != "EXECUTION_LOST" || fin["message"] != "The A2A task to resume is unavailable." {
		t.Fatalf("got %v", fin)
	}
}

// TestIncompleteResume: every announced pending interrupt must be answered
// in one resume. A second durable interrupt is added to the thread file of
// a stopped adapter, and a restarted adapter loads it.
func TestIncompleteResume(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-incomplete"
	it := interrupts(t, post(t, e.URL, e.body(th, "run-1", "permission", nil), nil))[0]
	path := filepath.Join(e.StateDir, "threads", th+".json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := state.Decode(raw, th)
	if err != nil {
		t.Fatal(err)
	}
	second := map[string]any{}
	for k, v := range doc.Execution.Pending[it["id"].(string)].Value {
		second[k] = v
	}
	second["inputId"] = "permission-second"
	second["toolUseId"] = "toolu_second"
	doc.Execution.Pending["permission-second"] = state.Pending{Value: second}
	_, rev, err := filestore.New(e.StateDir).Load(t.Context(), th)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := filestore.New(e.StateDir).Save(t.Context(), doc, rev); err != nil {
		t.Fatal(err)
	}
	e2 := e.restart(t)
	r := post(t, e2.URL, resumeBody(e2, th, "run-2", allow(it["id"])), nil)
	if fin := last(r.Events); fin["code"] != "INCOMPLETE_RESUME" || fin["message"] != "The resume must resolve every pending interrupt exactly once." {
		t.Fatalf("got %v", fin)
	}
	if n := countCalls(e.Agent.Calls(), "SendStreamingMessage", `"kind":"permission"`); n != 0 {
		t.Fatalf("an incomplete resume reached A2A %d times", n)
	}
	// The persisted interrupts survive the refusal.
	raw, _ = os.ReadFile(path)
	var check struct {
		Execution struct {
			Pending map[string]json.RawMessage `json:"pending"`
		} `json:"execution"`
	}
	if err := json.Unmarshal(raw, &check); err != nil || len(check.Execution.Pending) != 2 {
		t.Fatalf("pending after refusal: %v %s", err, raw)
	}
	if !strings.Contains(string(raw), "permission-second") {
		t.Fatal("second interrupt lost")
	}
}

// TestCancelledQuestion: cancelling a question cancels the A2A task and
// ends the run with CANCELLED (protocol.md §5.8).
func TestCancelledQuestion(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-cq"
	pipe := map[string]any{"runMode": "pipeline"}
	it := interrupts(t, post(t, e.URL, e.body(th, "run-1", "ask me a question", pipe), nil))[0]
	b := resumeBody(e, th, "run-2", map[string]any{"interruptId": it["id"], "status": "cancelled"})
	r := post(t, e.URL, b, nil)
	if fin := last(r.Events); fin["code"] != "CANCELLED" || fin["message"] != "The execution was cancelled by the interrupt response." {
		t.Fatalf("got %v", fin)
	}
	cancelled := false
	for _, c := range e.Agent.Calls() {
		cancelled = cancelled || c.Method == "CancelTask"
	}
	if !cancelled {
		t.Fatal("the A2A task was not cancelled")
	}
	// The interrupts are cleared: a new turn is admitted.
	if r := post(t, e.URL, e.body(th, "run-3", "Create a VPC template", nil), nil); r.Status != 200 {
		t.Fatalf("new turn: %d %s", r.Status, r.Body)
	}
}

// TestAcceptedAnswerCommitFailure: when the write that commits an accepted
// answer fails, the task is cancelled and the run ends
// STATE_PERSISTENCE_FAILED (§5.9 step 4). The failed save is the first
// that records an applied answer.
func TestAcceptedAnswerCommitFailure(t *testing.T) {
	applied := func(d *state.Thread) bool { return len(d.AppliedResumeDigests) > 0 }
	e := newEnv(t, envOptions{wrap: func(s state.Store) state.Store { return &failingStore{Store: s, failIf: applied} }})
	const th = "thread-commit"
	it := interrupts(t, post(t, e.URL, e.body(th, "run-1", "permission", nil), nil))[0]
	r := post(t, e.URL, resumeBody(e, th, "run-2", allow(it["id"])), nil)
	if fin := last(r.Events); fin["code"] != "STATE_PERSISTENCE_FAILED" || fin["message"] != "The accepted interrupt response could not be committed." {
		t.Fatalf("got %v", fin)
	}
	waitUntil(t, func() bool {
		for _, c := range e.Agent.Calls() {
			if c.Method == "CancelTask" {
				return true
			}
		}
		return false
	})
}

// TestTaskIdentityMismatch: GetTask answering another task's context fails
// the resume with A2A_PROTOCOL_ERROR (§5.6 step 3). The thread file of a
// stopped adapter is pointed at another thread's task.
func TestTaskIdentityMismatch(t *testing.T) {
	e := newEnv(t, envOptions{})
	itA := interrupts(t, post(t, e.URL, e.body("thread-ma", "run-1", "permission", nil), nil))[0]
	interrupts(t, post(t, e.URL, e.body("thread-mb", "run-1", "permission", nil), nil))
	store := filestore.New(e.StateDir)
	a, rev, err := store.Load(t.Context(), "thread-ma")
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := store.Load(t.Context(), "thread-mb")
	if err != nil {
		t.Fatal(err)
	}
	a.Execution.TaskID = b.Execution.TaskID
	if _, err := store.Save(t.Context(), a, rev); err != nil {
		t.Fatal(err)
	}
	e2 := e.restart(t)
	r := post(t, e2.URL, resumeBody(e2, "thread-ma", "run-2", allow(itA["id"])), nil)
	if fin := last(r.Events); fin["code"] != "A2A_PROTOCOL_ERROR" || fin["message"] != "The A2A task identity does not match the interrupted run." {
		t.Fatalf("got %v", fin)
	}
}

// TestPipelinePermissionStepsAcrossResume: a parent-scope pipeline
// permission closes the open step before the interrupt outcome, and the
// resumed run reopens it first (protocol.md §4.4 step 3, §4.13).
func TestPipelinePermissionStepsAcrossResume(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-pp"
	pipe := map[string]any{"runMode": "pipeline"}
	r := post(t, e.URL, e.body(th, "run-1", "pipeline permission", pipe), nil)
	it := interrupts(t, r)[0]
	assertBalanced(t, r.Events)
	var closed []string
	for i := len(r.Events) - 2; i >= 0 && r.Events[i]["type"] == "STEP_FINISHED"; i-- {
		closed = append(closed, r.Events[i]["stepName"].(string))
	}
	if len(closed) == 0 {
		t.Fatalf("no step closed before the interrupt outcome: %v", types(r.Events))
	}
	b := resumeBody(e, th, "run-2", allow(it["id"]))
	b["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["runMode"] = "pipeline"
	r = post(t, e.URL, b, nil)
	if fin := last(r.Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("resume: %v %v", types(r.Events), fin)
	}
	if r.Events[1]["type"] != "STEP_STARTED" || r.Events[1]["stepName"] != closed[len(closed)-1] {
		t.Fatalf("the resumed run must reopen %v first: %v", closed, types(r.Events)[:4])
	}
	assertBalanced(t, r.Events)
}
