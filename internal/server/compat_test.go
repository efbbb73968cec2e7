package server_test

import (
	"encoding/json"
	"reflect"
	"testing"
)

// errorDetails decodes our fields of the error envelope (protocol.md §2.4).
func errorDetails(t *testing.T, r *response) (field, reason string, pending []map[string]any) {
	t.Helper()
	var b struct {
		Error struct {
			Field, Reason     string
			PendingInterrupts []map[string]any
		}
	}
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatalf("status %d, body %q: %v", r.Status, r.Body, err)
	}
	return b.Error.Field, b.Error.Reason, b.Error.PendingInterrupts
}

// TestErrorFieldAndReason: validation refusals keep the spec's code and
// message and add the offending member's JSON pointer and the rule.
func TestErrorFieldAndReason(t *testing.T) {
	e := newEnv(t, envOptions{})
	missingState := e.body("thread-fr", "run-1", "hi", nil)
	delete(missingState, "state")
	badStatus := resumeBody(e, "thread-fr", "run-1", map[string]any{"interruptId": "x", "status": "maybe"})
	badContent := e.body("thread-fr", "run-1", "", nil)
	badContent["messages"] = []any{map[string]any{"id": "m", "role": "user", "content": []any{map[string]any{"text": "x"}}}}
	unknown := e.body("thread-fr", "run-1", "hi", map[string]any{"surprise/key": true})
	snake := e.body("thread-fr", "run-1", "hi", map[string]any{"run_mode": "fast"})
	budget := e.body("thread-fr", "run-1", "hi", map[string]any{"thinking": map[string]any{"budget": 1.5}})
	outside := e.body("thread-fr", "run-1", "hi", map[string]any{"cwd": "/etc"})
	tools := e.body("thread-fr", "run-1", "hi", nil)
	tools["tools"] = []any{map[string]any{"name": "t", "description": "d", "parameters": map[string]any{}}}
	cases := []struct {
		name          string
		body          any
		msg           string
		field, reason string
	}{
		{"missing state", missingState, "Invalid AG-UI RunAgentInput envelope.", "/state", "is required"},
		{"resume status", badStatus, "Invalid AG-UI RunAgentInput envelope.", "/resume/0/status", `must be "resolved" or "cancelled"`},
		{"content part", badContent, "Invalid AG-UI RunAgentInput envelope.", "/messages/0/content/0/type", "is required"},
		{"unknown key", unknown, "Invalid iac-code forwarded properties.", "/forwardedProps/iacCode/surprise~1key", "unknown key"},
		{"literal", snake, "Invalid iac-code forwarded properties.", "/forwardedProps/iacCode/runMode", "has an unsupported value"},
		{"nested", budget, "Invalid iac-code forwarded properties.", "/forwardedProps/iacCode/thinking/budget", "must be an integer"},
		{"workspace", outside, "Invalid iac-code forwarded properties.", "/forwardedProps/iacCode/cwd", "is outside the allowed workspace roots"},
		{"tools", tools, "Client-provided tools are not supported.", "/tools", "must be empty"},
	}
	for _, c := range cases {
		r := post(t, e.URL, c.body, nil)
		code, msg := errorOf(t, r)
		field, reason, _ := errorDetails(t, r)
		if r.Status != 400 || code != "INVALID_INPUT" || msg != c.msg || field != c.field || reason != c.reason {
			t.Errorf("%s: got %d %s %q field %q reason %q; want 400 INVALID_INPUT %q %q %q", c.name, r.Status, code, msg, field, reason, c.msg, c.field, c.reason)
		}
	}
}

// TestResumeRequiredListsPending: a client that lost its interrupts (a
// reload) learns them from the RESUME_REQUIRED body, exactly as the
// interrupt outcome announced them.
func TestResumeRequiredListsPending(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-rr"
	its := interrupts(t, post(t, e.URL, e.body(th, "run-1", "Deploy it (permission)", nil), nil))
	r := post(t, e.URL, e.body(th, "run-2", "hello", nil), nil)
	code, _ := errorOf(t, r)
	_, _, pending := errorDetails(t, r)
	if r.Status != 409 || code != "RESUME_REQUIRED" {
		t.Fatalf("got %d %s", r.Status, code)
	}
	if !reflect.DeepEqual(pending, its) {
		t.Fatalf("pendingInterrupts %v; want the announced %v", pending, its)
	}
	// The list is what a resume needs: answering it works.
	id := pending[0]["id"].(string)
	fin := last(post(t, e.URL, resumeBody(e, th, "run-3", map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}), nil).Events)
	if fin["type"] != "RUN_FINISHED" {
		t.Fatalf("resume from the listed interrupt: %v", fin)
	}
}

// TestCopilotKitCompat covers --compat copilotkit over HTTP: the resume may
// reuse the interrupted run's id, replays stay replays, tools are ignored.
func TestCopilotKitCompat(t *testing.T) {
	allow := func(id string) map[string]any {
		return map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}
	}
	t.Run("default refuses the reused id", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		its := interrupts(t, post(t, e.URL, e.body("thread-ck0", "run-1", "Deploy it (permission)", nil), nil))
		r := post(t, e.URL, resumeBody(e, "thread-ck0", "run-1", allow(its[0]["id"].(string))), nil)
		if code, _ := errorOf(t, r); r.Status != 409 || code != "RUN_ID_CONFLICT" {
			t.Fatalf("got %d %s", r.Status, code)
		}
	})
	t.Run("copilotkit accepts it once", func(t *testing.T) {
		e := newEnv(t, envOptions{copilotKit: true})
		const th = "thread-ck1"
		first := e.body(th, "run-1", "Deploy it (permission)", nil)
		its := interrupts(t, post(t, e.URL, first, nil))
		resume := resumeBody(e, th, "run-1", allow(its[0]["id"].(string)))
		r := post(t, e.URL, resume, nil)
		if fin := last(r.Events); r.Status != 200 || fin["type"] != "RUN_FINISHED" || fin["runId"] != "run-1" {
			t.Fatalf("compat resume: %d %v", r.Status, fin)
		}
		if n := countCalls(e.Agent.Calls(), "SendStreamingMessage", `"kind":"permission"`); n != 1 {
			t.Fatalf("A2A saw %d permission answers, want 1", n)
		}
		// Replays of both requests are still replays; another body with
		// the same id is a conflict.
		for _, c := range []struct {
			name string
			body map[string]any
			code string
		}{
			{"resume replay", resume, "DUPLICATE_RUN_ID"},
			{"first run replay", first, "DUPLICATE_RUN_ID"},
			{"other body", e.body(th, "run-1", "something else", nil), "RUN_ID_CONFLICT"},
		} {
			r := post(t, e.URL, c.body, nil)
			if code, _ := errorOf(t, r); r.Status != 409 || code != c.code {
				t.Errorf("%s: got %d %s; want %s", c.name, r.Status, code, c.code)
			}
		}
		if n := countCalls(e.Agent.Calls(), "SendStreamingMessage", `"kind":"permission"`); n != 1 {
			t.Fatalf("after replays A2A saw %d permission answers, want 1", n)
		}
	})
	t.Run("copilotkit: only the run that raised exactly these interrupts", func(t *testing.T) {
		e := newEnv(t, envOptions{copilotKit: true})
		const th = "thread-ck2"
		if r := post(t, e.URL, e.body(th, "run-a", "Create a VPC template", nil), nil); last(r.Events)["type"] != "RUN_FINISHED" {
			t.Fatalf("first turn %v", types(r.Events))
		}
		its := interrupts(t, post(t, e.URL, e.body(th, "run-b", "Deploy it (permission)", nil), nil))
		id := its[0]["id"].(string)
		for _, c := range []struct {
			name string
			body map[string]any
		}{
			{"an older run's id", resumeBody(e, th, "run-a", allow(id))},
			{"not every interrupt", resumeBody(e, th, "run-b")},
			{"an unknown interrupt", resumeBody(e, th, "run-b", allow("permission-other"))},
		} {
			r := post(t, e.URL, c.body, nil)
			if code, _ := errorOf(t, r); r.Status != 409 || code != "RUN_ID_CONFLICT" {
				t.Errorf("%s: got %d %s; want 409 RUN_ID_CONFLICT", c.name, r.Status, code)
			}
		}
	})
	t.Run("copilotkit ignores client tools", func(t *testing.T) {
		e := newEnv(t, envOptions{copilotKit: true})
		b := e.body("thread-ck3", "run-1", "Create a VPC template", nil)
		b["tools"] = []any{map[string]any{"name": "showToast", "description": "d", "parameters": map[string]any{}}}
		r := post(t, e.URL, b, nil)
		if fin := last(r.Events); r.Status != 200 || fin["type"] != "RUN_FINISHED" {
			t.Fatalf("with tools: %d %v", r.Status, fin)
		}
	})
}

// TestRepeatedCancelIsAlreadyApplied: a cancelled question ends the run with
// CANCELLED; the same cancellation sent again (a client retry with a new
// run id) is told RESUME_ALREADY_APPLIED, the truth, not EXECUTION_LOST
// (docs/decisions.md).
func TestRepeatedCancelIsAlreadyApplied(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-rc"
	pipeline := map[string]any{"runMode": "pipeline"}
	its := interrupts(t, post(t, e.URL, e.body(th, "run-1", "Plan a deployment and ask me a question", pipeline), nil))
	cancel := map[string]any{"interruptId": its[0]["id"], "status": "cancelled"}
	for i, want := range []string{"CANCELLED", "RESUME_ALREADY_APPLIED"} {
		b := resumeBody(e, th, "run-c"+randSuffix(), cancel)
		b["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["runMode"] = "pipeline"
		fin := last(post(t, e.URL, b, nil).Events)
		if fin["type"] != "RUN_ERROR" || fin["code"] != want {
			t.Fatalf("cancel #%d: %v; want RUN_ERROR %s", i+1, fin, want)
		}
	}
	// The thread takes a new message afterwards.
	if fin := last(post(t, e.URL, e.body(th, "run-2", "Create a VPC template", nil), nil).Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("new message after the cancel: %v", fin)
	}
}
