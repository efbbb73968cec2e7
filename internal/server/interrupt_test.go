package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/demoagent/demoagenttest"
)

// interrupts returns RUN_FINISHED.outcome.interrupts of a run.
func interrupts(t *testing.T, r *response) []map[string]any {
	t.Helper()
	fin := last(r.Events)
	o, _ := fin["outcome"].(map[string]any)
	if fin["type"] != "RUN_FINISHED" || o["type"] != "interrupt" {
		t.Fatalf("want an interrupt outcome, got %v (%v)", fin, types(r.Events))
	}
	var out []map[string]any
	for _, it := range o["interrupts"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func resumeBody(e *env, threadID, runID string, entries ...map[string]any) map[string]any {
	b := e.body(threadID, runID, "", nil)
	list := make([]any, len(entries))
	for i, x := range entries {
		list[i] = x
	}
	b["resume"] = list
	return b
}

func countCalls(calls []demoagenttest.Call, method string, partKind string) int {
	n := 0
	for _, c := range calls {
		if c.Method != method {
			continue
		}
		for _, p := range c.Parts {
			raw, _ := json.Marshal(p)
			if strings.Contains(string(raw), partKind) {
				n++
			}
		}
	}
	return n
}

// TestPermissionInterruptAndResume walks the permission flow of protocol.md
// §5: interrupt outcome, the resume rules and errors, exactly-once apply.
func TestPermissionInterruptAndResume(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-perm"
	r := post(t, e.URL, e.body(th, "run-1", "Deploy it (permission)", nil), nil)
	its := interrupts(t, r)
	if len(its) != 1 {
		t.Fatalf("interrupts %v", its)
	}
	it := its[0]
	schema, _ := json.Marshal(it["responseSchema"])
	if it["reason"] != "tool_call" || !strings.HasPrefix(it["id"].(string), "permission-") ||
		string(schema) != `{"additionalProperties":false,"properties":{"decision":{"enum":["allow_once","deny"],"type":"string"}},"required":["decision"],"type":"object"}` {
		t.Fatalf("interrupt %v schema %s", it, schema)
	}
	md := it["metadata"].(map[string]any)
	if md["kind"] != "permission" || md["schemaVersion"] != float64(1) || md["standardOptions"] == nil {
		t.Fatalf("metadata %v", md)
	}
	if _, ok := it["expiresAt"]; ok {
		t.Fatal("no interrupt deadline: expiresAt must be absent")
	}
	assertBalanced(t, r.Events)
	id := it["id"].(string)

	// A new turn while waiting: 409 RESUME_REQUIRED.
	if r := post(t, e.URL, e.body(th, "run-x", "hello", nil), nil); r.Status != 409 {
		t.Fatalf("want RESUME_REQUIRED, got %d %s", r.Status, r.Body)
	} else if code, _ := errorOf(t, r); code != "RESUME_REQUIRED" {
		t.Fatalf("code %s", code)
	}
	// A resume with another rosInvocationId: 409 EXECUTION_LOST.
	other := resumeBody(e, th, "run-y", map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}})
	other["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["rosInvocationId"] = "invocation-2"
	if r := post(t, e.URL, other, nil); r.Status != 409 {
		t.Fatalf("mismatch: %d", r.Status)
	} else if code, msg := errorOf(t, r); code != "EXECUTION_LOST" || msg != "The resume request does not match the interrupted run." {
		t.Fatalf("mismatch: %s %q", code, msg)
	}

	runErrors := []struct {
		runID   string
		entries []map[string]any
		code    string
		msg     string
	}{
		{"run-2", []map[string]any{{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow"}}}, "RESUME_PAYLOAD_INVALID", "The interrupt response payload is invalid."},
		{"run-3", []map[string]any{{"interruptId": id, "status": "resolved"}}, "RESUME_PAYLOAD_INVALID", "A resolved interrupt requires a payload."},
		{"run-4", []map[string]any{{"interruptId": id, "status": "cancelled"}, {"interruptId": id, "status": "cancelled"}}, "INCOMPLETE_RESUME", "The resume contains duplicate interrupt ids."},
		{"run-5", []map[string]any{{"interruptId": "permission-unknown", "status": "cancelled"}}, "UNKNOWN_INTERRUPT", "The resume references an unknown interrupt."},
	}
	for _, c := range runErrors {
		r := post(t, e.URL, resumeBody(e, th, c.runID, c.entries...), nil)
		fin := last(r.Events)
		if r.Status != 200 || fin["type"] != "RUN_ERROR" || fin["code"] != c.code || fin["message"] != c.msg {
			t.Fatalf("%s: %d %v", c.runID, r.Status, fin)
		}
	}
	if n := countCalls(e.Agent.Calls(), "SendStreamingMessage", `"kind":"permission"`); n != 0 {
		t.Fatalf("refused resumes reached A2A %d times", n)
	}

	// The corrected resume is applied once and the turn completes.
	ok := resumeBody(e, th, "run-6", map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}})
	r = post(t, e.URL, ok, nil)
	fin := last(r.Events)
	if fin["type"] != "RUN_FINISHED" || fin["outcome"].(map[string]any)["type"] != "success" {
		t.Fatalf("resume: %v %v", types(r.Events), fin)
	}
	if !strings.Contains(r.Raw, `"type":"TOOL_CALL_RESULT"`) {
		t.Fatalf("the permitted tool did not report a result: %v", types(r.Events))
	}
	// Text shown before the interrupt is not shown again (protocol.md §4.7).
	if strings.Contains(r.Raw, "I need to inspect the workspace first.") {
		t.Fatalf("text from before the interrupt was replayed:\n%s", r.Raw)
	}
	if !strings.Contains(r.Raw, "The workspace is ") {
		t.Fatalf("the continuation text is missing:\n%s", r.Raw)
	}
	assertBalanced(t, r.Events)
	// Repeating the accepted answer does not run the tool again.
	again := resumeBody(e, th, "run-7", map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}})
	r = post(t, e.URL, again, nil)
	if fin := last(r.Events); fin["code"] != "RESUME_ALREADY_APPLIED" || fin["message"] != "The interrupt response has already been applied." {
		t.Fatalf("repeat: %v", fin)
	}
	if n := countCalls(e.Agent.Calls(), "SendStreamingMessage", `"kind":"permission"`); n != 1 {
		t.Fatalf("A2A saw %d permission answers, want exactly 1", n)
	}
	assertStateClean(t, e.StateDir, "Deploy it (permission)")
}

// TestQuestionInterrupt: a question becomes an input_required interrupt;
// its answer is sent as text and reported as TOOL_CALL_RESULT once.
func TestQuestionInterrupt(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-question"
	r := post(t, e.URL, e.body(th, "run-1", "ask me a question", map[string]any{"runMode": "pipeline"}), nil)
	it := interrupts(t, r)[0]
	if it["reason"] != "input_required" {
		t.Fatalf("interrupt %v", it)
	}
	opts := it["metadata"].(map[string]any)["standardOptions"].([]any)
	first := opts[0].(map[string]any)
	if !strings.Contains(it["message"].(string), "\n- "+first["id"].(string)+": "+first["title"].(string)) {
		t.Fatalf("message lacks the option list: %q", it["message"])
	}
	b := resumeBody(e, th, "run-2", map[string]any{"interruptId": it["id"], "status": "resolved", "payload": map[string]any{"selectedId": first["id"]}})
	b["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["runMode"] = "pipeline"
	r = post(t, e.URL, b, nil)
	n := strings.Count(r.Raw, `"type":"TOOL_CALL_RESULT"`)
	fin := last(r.Events)
	if fin["type"] != "RUN_FINISHED" || n < 1 {
		t.Fatalf("answer: %v (%d results) %v", types(r.Events), n, fin)
	}
	assertBalanced(t, r.Events)
}

// TestCancelExtension covers §7.1: validation, cancelled, already_terminal,
// EXECUTION_NOT_FOUND, and the live run ending CANCELLED.
func TestCancelExtension(t *testing.T) {
	e := newEnv(t, envOptions{})
	s := openStream(t, e.URL, e.body("thread-cancel", "run-1", "cancel me", nil))
	v := s.waitFor(t, "CUSTOM")["value"].(map[string]any)
	exec := v["executionId"].(string)
	body := map[string]any{"threadId": "thread-cancel", "rosInvocationId": "invocation-1"}

	checks := []struct {
		body        any
		status      int
		code, msg   string
		contentType string
	}{
		{`{"threadId":`, 400, "INVALID_JSON", "The cancel request body is not valid JSON.", ""},
		{`[]`, 400, "INVALID_INPUT", "The cancel request must be a JSON object.", ""},
		{map[string]any{"threadId": "thread-cancel"}, 400, "INVALID_INPUT", "threadId and rosInvocationId are required.", ""},
		{strings.Repeat(" ", 64<<10+1), 413, "REQUEST_TOO_LARGE", "The cancel request body is too large.", ""},
		{map[string]any{"threadId": "no-such-thread", "rosInvocationId": "invocation-1"}, 404, "EXECUTION_NOT_FOUND", "The execution was not found.", ""},
		{map[string]any{"threadId": "thread-cancel", "rosInvocationId": "other"}, 404, "EXECUTION_NOT_FOUND", "The execution was not found.", ""},
	}
	for i, c := range checks {
		r := postCancel(t, e, exec, c.body)
		if code, msg := errorOf(t, r); r.Status != c.status || code != c.code || msg != c.msg {
			t.Fatalf("check %d: %d %s %q", i, r.Status, code, msg)
		}
	}
	r := postCancel(t, e, exec, body)
	if r.Status != 200 || string(r.Body) != `{"executionId":"`+exec+`","status":"cancelled"}`+"\n" {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	if fin := s.rest(t); fin["type"] != "RUN_ERROR" || fin["code"] != "CANCELLED" || fin["message"] != "The execution was cancelled." {
		t.Fatalf("live run ended with %v", fin)
	}
	r = postCancel(t, e, exec, body)
	if r.Status != 200 || string(r.Body) != `{"executionId":"`+exec+`","status":"already_terminal"}`+"\n" {
		t.Fatalf("second cancel: %d %s", r.Status, r.Body)
	}
	if r := postCancel(t, e, "unknown-execution", body); r.Status != 404 {
		t.Fatalf("unknown execution: %d", r.Status)
	}
}

// TestDisconnectCancelsOrdinaryRun: closing the connection of an ordinary
// run cancels its A2A task (protocol.md §9.1).
func TestDisconnectCancelsOrdinaryRun(t *testing.T) {
	e := newEnv(t, envOptions{})
	s := openStream(t, e.URL, e.body("thread-dc", "run-1", "slow", nil))
	s.waitFor(t, "TEXT_MESSAGE_CONTENT")
	s.res.Body.Close()
	waitUntil(t, func() bool {
		for _, c := range e.Agent.Calls() {
			if c.Method == "CancelTask" {
				return true
			}
		}
		return false
	})
	// The thread is released: a new turn is admitted.
	waitUntil(t, func() bool {
		r := post(t, e.URL, e.body("thread-dc", "run-2-"+randSuffix(), "Create a VPC template", nil), nil)
		return r.Status == 200
	})
}

// TestDisconnectAfterInterruptKeepsState: a run that ended with an
// interrupt does not depend on its connection; nothing is cancelled.
func TestDisconnectAfterInterruptKeepsState(t *testing.T) {
	e := newEnv(t, envOptions{})
	s := openStream(t, e.URL, e.body("thread-dci", "run-1", "permission", nil))
	s.waitFor(t, "RUN_FINISHED")
	s.res.Body.Close()
	for _, c := range e.Agent.Calls() {
		if c.Method == "CancelTask" {
			t.Fatal("an interrupted run must not cancel its task")
		}
	}
	r := post(t, e.URL, e.body("thread-dci", "run-2", "hello", nil), nil)
	if code, _ := errorOf(t, r); code != "RESUME_REQUIRED" {
		t.Fatalf("pending interrupt lost: %s", code)
	}
}

// TestCancelPausedExecution: cancelling an execution that waits for an
// interrupt answer clears the interrupt and cancels the A2A task; a resume
// then finds nothing to resume, and a new turn is admitted (§7.1).
func TestCancelPausedExecution(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-cp"
	r := post(t, e.URL, e.body(th, "run-1", "permission", nil), nil)
	it := interrupts(t, r)[0]
	var exec string
	for _, ev := range r.Events {
		if ev["name"] == "iac-code.session.v1" {
			exec = ev["value"].(map[string]any)["executionId"].(string)
		}
	}
	c := postCancel(t, e, exec, map[string]any{"threadId": th, "rosInvocationId": "invocation-1"})
	if c.Status != 200 || !strings.Contains(string(c.Body), `"status":"cancelled"`) {
		t.Fatalf("cancel: %d %s", c.Status, c.Body)
	}
	if n := countMethod(e.Agent.Calls(), "CancelTask"); n != 1 {
		t.Fatalf("CancelTask calls: %d", n)
	}
	r = post(t, e.URL, resumeBody(e, th, "run-2", allow(it["id"])), nil)
	if fin := last(r.Events); fin["code"] != "EXECUTION_LOST" {
		t.Fatalf("resume after cancel: %v", fin)
	}
	if r := post(t, e.URL, e.body(th, "run-3", "Create a VPC template", nil), nil); last(r.Events)["type"] != "RUN_FINISHED" {
		t.Fatalf("new turn after cancel: %d %v", r.Status, last(r.Events))
	}
}

func countMethod(calls []demoagenttest.Call, method string) int {
	n := 0
	for _, c := range calls {
		if c.Method == method {
			n++
		}
	}
	return n
}
