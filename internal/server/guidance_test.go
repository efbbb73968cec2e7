package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/demoagent/demoagenttest"
)

// Active guidance (protocol.md §5.13) through the real adapter and the
// embedded agent: the "guided" pipeline waits for guidance at each of its
// two steps and applies what arrives.

// guidanceBody is a guidance request on thread th.
func guidanceBody(e *env, th, runID, text string, extra map[string]any) map[string]any {
	iac := map[string]any{"runMode": "pipeline", "activeGuidance": true}
	for k, v := range extra {
		iac[k] = v
	}
	return e.body(th, runID, text, iac)
}

// contentOf joins the TEXT_MESSAGE_CONTENT deltas of evs.
func contentOf(evs []map[string]any) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev["type"] == "TEXT_MESSAGE_CONTENT" {
			b.WriteString(ev["delta"].(string))
		}
	}
	return b.String()
}

// waitForText reads s until its text contains want.
func waitForText(t *testing.T, s *stream, want string) {
	t.Helper()
	for !strings.Contains(contentOf(s.events), want) {
		if s.next(t) == nil {
			t.Fatalf("stream ended without %q: %v", want, types(s.events))
		}
	}
}

// guidanceCalls returns the agent's SendStreamingMessage calls on taskID
// whose message id is the AG-UI message id of one of runIDs.
func guidanceCalls(e *env, taskID string) []demoagenttest.Call {
	var out []demoagenttest.Call
	for _, c := range e.Agent.Calls() {
		if c.Method == "SendStreamingMessage" && c.TaskID == taskID {
			out = append(out, c)
		}
	}
	return out
}

// assertGuided checks a guidance run's stream: RUN_STARTED, then
// RUN_FINISHED success without usage, and nothing else.
func assertGuided(t *testing.T, r *response, th, runID string) {
	t.Helper()
	if r.Status != 200 || !slices.Equal(types(r.Events), []string{"RUN_STARTED", "RUN_FINISHED"}) {
		t.Fatalf("guidance run: %d %v %s", r.Status, types(r.Events), r.Body)
	}
	fin := r.Events[1]
	if fin["threadId"] != th || fin["runId"] != runID || fin["outcome"].(map[string]any)["type"] != "success" {
		t.Fatalf("guidance end %v", fin)
	}
	if _, has := fin["usage"]; has {
		t.Fatalf("guidance run reports usage: %v", fin)
	}
}

func TestGuidanceSteersRunningPipeline(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-guidance"
	main := openStream(t, e.URL, e.body(th, "run-1", "Run a guided pipeline", map[string]any{"runMode": "pipeline"}))
	waitForText(t, main, "Planning the network")
	sess := sessionOf(t, main.events)
	task := sess["taskId"].(string)

	// Admitted while run-1 streams (no THREAD_BUSY), and run-1 stays the
	// thread's active run: an ordinary turn is still refused.
	g1 := guidanceBody(e, th, "run-g1", "use two zones", map[string]any{"guidanceId": "g-1"})
	assertGuided(t, post(t, e.URL, g1, nil), th, "run-g1")
	if r := post(t, e.URL, e.body(th, "run-x", "hello", map[string]any{"runMode": "pipeline"}), nil); r.Status != 409 {
		t.Fatalf("ordinary turn during guidance: %d", r.Status)
	} else if code, _ := errorOf(t, r); code != "THREAD_BUSY" {
		t.Fatalf("ordinary turn during guidance: %s", code)
	}

	calls := guidanceCalls(e, task)
	if len(calls) != 1 {
		t.Fatalf("guidance calls %+v", calls)
	}
	c := calls[0]
	if c.MessageID != "m-run-g1" || c.ContextID != sess["contextId"] || len(c.Parts) != 1 || c.Parts[0].Text != "use two zones" ||
		!slices.Contains(c.MetadataKeys, "guidance_id") || !slices.Contains(c.MetadataKeys, "run_mode") {
		t.Fatalf("guidance sent as %+v", c)
	}

	// The same request again is a duplicate run; a retry under a new run
	// id with the same guidanceId reaches A2A, which applies it once.
	if r := post(t, e.URL, g1, nil); r.Status != 409 {
		t.Fatalf("replayed guidance: %d", r.Status)
	} else if code, msg := errorOf(t, r); code != "DUPLICATE_RUN_ID" || msg != "The AG-UI run id has already been used." {
		t.Fatalf("replayed guidance: %s %q", code, msg)
	}
	// snake_case spellings are accepted too. (Sent while the pipeline
	// waits: docs/demo-agent.md says why.)
	waitForText(t, main, "Planning the compute")
	retry := e.body(th, "run-g1b", "use two zones", map[string]any{"run_mode": "pipeline", "active_guidance": true, "guidance_id": "g-1"})
	assertGuided(t, post(t, e.URL, retry, nil), th, "run-g1b")
	assertGuided(t, post(t, e.URL, guidanceBody(e, th, "run-g2", "use ecs.g7.large", nil), nil), th, "run-g2")

	fin := main.rest(t)
	if fin["type"] != "RUN_FINISHED" || fin["outcome"].(map[string]any)["type"] != "success" {
		t.Fatalf("guided run ended %v", fin)
	}
	text := contentOf(main.events)
	if strings.Count(text, "Guidance applied: use two zones") != 1 || strings.Count(text, "Guidance applied: use ecs.g7.large") != 1 {
		t.Fatalf("guided text %q", text)
	}
	assertBalanced(t, main.events)
	if n := countMethod(e.Agent.Calls(), "CancelTask"); n != 0 {
		t.Fatalf("%d CancelTask calls", n)
	}

	// Guidance did not rotate the execution; its run ids are recorded.
	raw, err := os.ReadFile(threadFile(t, e))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Execution  struct{ ExecutionID string }
		RunDigests map[string]string
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Execution.ExecutionID != sess["executionId"] {
		t.Fatalf("execution %s, want %s", doc.Execution.ExecutionID, sess["executionId"])
	}
	for _, id := range []string{"run-1", "run-g1", "run-g1b", "run-g2"} {
		if doc.RunDigests[id] == "" {
			t.Fatalf("runDigests lacks %s: %v", id, doc.RunDigests)
		}
	}
	assertStateClean(t, e.StateDir, "use two zones", "ecs.g7.large")
}

// threadFile is the only thread file of e's state directory.
func threadFile(t *testing.T, e *env) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.StateDir, "threads", "*.json"))
	if len(files) != 1 {
		t.Fatalf("thread files %v", files)
	}
	return files[0]
}

// TestGuidanceAdmission: the refusals of protocol.md §2.6 for guidance.
func TestGuidanceAdmission(t *testing.T) {
	e := newEnv(t, envOptions{})
	const lost = "The execution to resume is no longer available."
	// A thread with a task in normal mode.
	assertSuccess(t, post(t, e.URL, e.body("th-normal", "run-1", "Create a VPC", nil), nil))
	// A thread admitted once but never given a task (no user message).
	noTask := post(t, e.URL, e.body("th-notask", "run-1", "", map[string]any{"runMode": "pipeline"}), nil)
	assertRunError(t, noTask, "INVALID_INPUT", "A new run requires a user message.")
	// A pipeline waiting on a question.
	asked := post(t, e.URL, e.body("th-ask", "run-1", "ask me a question", map[string]any{"runMode": "pipeline"}), nil)
	its := interrupts(t, asked)
	withResume := guidanceBody(e, "th-normal", "run-g", "steer", nil)
	withResume["resume"] = []any{map[string]any{"interruptId": "x", "status": "cancelled"}}
	otherCwd := guidanceBody(e, "th-normal", "run-g", "steer", map[string]any{"cwd": filepath.Join(e.Root, "other")})

	cases := []struct {
		name       string
		body       map[string]any
		status     int
		code, msg  string
		pendingIDs []any
	}{
		{"unknown thread", guidanceBody(e, "th-unknown", "run-g", "steer", nil), 409, "EXECUTION_LOST", lost, nil},
		{"not pipeline mode", guidanceBody(e, "th-normal", "run-g", "steer", map[string]any{"runMode": "normal"}), 409, "EXECUTION_LOST", lost, nil},
		{"no run mode", e.body("th-normal", "run-g", "steer", map[string]any{"activeGuidance": true}), 409, "EXECUTION_LOST", lost, nil},
		{"no task", guidanceBody(e, "th-notask", "run-g", "steer", nil), 409, "EXECUTION_LOST", lost, nil},
		{"carries resume", withResume, 409, "EXECUTION_LOST", lost, nil},
		{"pending interrupts", guidanceBody(e, "th-ask", "run-g", "steer", nil), 409, "RESUME_REQUIRED",
			"The AG-UI thread is waiting for interrupt responses.", []any{its[0]["id"]}},
		{"binding first", otherCwd, 409, "THREAD_BINDING_CONFLICT", "The AG-UI thread is already bound to another workspace or caller.", nil},
		{"run id replay first", guidanceBody(e, "th-normal", "run-1", "steer", nil), 409, "RUN_ID_CONFLICT", "The AG-UI run id has already been used.", nil},
		{"empty guidanceId", guidanceBody(e, "th-normal", "run-g", "steer", map[string]any{"guidanceId": ""}), 400, "INVALID_INPUT", "Invalid iac-code forwarded properties.", nil},
	}
	calls := len(e.Agent.Calls())
	for _, c := range cases {
		r := post(t, e.URL, c.body, nil)
		code, msg := errorOf(t, r)
		if r.Status != c.status || code != c.code || msg != c.msg {
			t.Errorf("%s: %d %s %q, want %d %s %q", c.name, r.Status, code, msg, c.status, c.code, c.msg)
		}
		if c.pendingIDs != nil {
			_, _, pending := errorDetails(t, r)
			if len(pending) != 1 || pending[0]["id"] != c.pendingIDs[0] {
				t.Errorf("%s: pending %v", c.name, pending)
			}
		}
	}
	if n := len(e.Agent.Calls()); n != calls {
		t.Fatalf("refused guidance reached A2A: %d calls", n-calls)
	}
	// A refused guidance spent no run id: the thread goes on as before.
	assertSuccess(t, post(t, e.URL, e.body("th-normal", "run-g", "Create a VPC", nil), nil))
}

// TestGuidanceAfterPipelineEnded: a finished run marks its execution
// terminal, which releases the task from the binding, so a late guidance
// finds no task: 409 EXECUTION_LOST, and A2A hears nothing.
func TestGuidanceAfterPipelineEnded(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-guidance-late"
	assertSuccess(t, post(t, e.URL, e.body(th, "run-1", "Run the pipeline", map[string]any{"runMode": "pipeline"}), nil))
	calls := len(e.Agent.Calls())
	r := post(t, e.URL, guidanceBody(e, th, "run-g", "too late", nil), nil)
	if code, msg := errorOf(t, r); r.Status != 409 || code != "EXECUTION_LOST" || msg != "The execution to resume is no longer available." {
		t.Fatalf("late guidance: %d %s %q", r.Status, code, msg)
	}
	if n := len(e.Agent.Calls()); n != calls {
		t.Fatalf("late guidance reached A2A: %d calls", n-calls)
	}
}

// TestGuidanceAcrossAdapterRestart: a restarted adapter (nothing cached,
// no active run in memory) steers the pipeline that still runs in A2A,
// from the thread file alone, without rotating its execution (the
// original's "pipeline_guidance_preserves_active_execution_across_adapter_restart").
func TestGuidanceAcrossAdapterRestart(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-guidance-restart"
	main := openStream(t, e.URL, e.body(th, "run-1", "Run a guided pipeline", map[string]any{"runMode": "pipeline"}))
	waitForText(t, main, "Planning the network")
	exec := sessionOf(t, main.events)["executionId"]
	e2 := e.restart(t)
	assertGuided(t, post(t, e2.URL, guidanceBody(e2, th, "run-g1", "use two zones", nil), nil), th, "run-g1")
	waitForText(t, main, "Planning the compute")
	assertGuided(t, post(t, e2.URL, guidanceBody(e2, th, "run-g2", "use ecs.g7.large", nil), nil), th, "run-g2")
	if fin := main.rest(t); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("pipeline run ended %v", fin)
	}
	text := contentOf(main.events)
	if !strings.Contains(text, "Guidance applied: use two zones") || !strings.Contains(text, "Guidance applied: use ecs.g7.large") {
		t.Fatalf("guided text %q", text)
	}
	raw, err := os.ReadFile(threadFile(t, e))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Execution struct{ ExecutionID string } }
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Execution.ExecutionID != exec {
		t.Fatalf("execution %s, want %v (%v)", doc.Execution.ExecutionID, exec, err)
	}
}
