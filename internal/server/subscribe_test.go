package server_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The observation route (protocol.md §7.2), against the embedded agent:
// read-only, one terminal event, never cancelling or writing.

func subscribeURL(e *env, executionID string) string {
	return e.URL + "extensions/iac-code/v1/executions/" + executionID + "/subscribe"
}

// sessionOf returns the iac-code.session.v1 value of a run's events.
func sessionOf(t *testing.T, evs []map[string]any) map[string]any {
	t.Helper()
	for _, ev := range evs {
		if ev["type"] == "CUSTOM" && ev["name"] == "iac-code.session.v1" {
			return ev["value"].(map[string]any)
		}
	}
	t.Fatalf("no session event in %v", types(evs))
	return nil
}

func errorText(t *testing.T, r *response) string {
	t.Helper()
	var b struct{ Error string }
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatalf("status %d body %q: %v", r.Status, r.Body, err)
	}
	return b.Error
}

// stateBytes reads every thread file of the state directory.
func stateBytes(t *testing.T, e *env) []byte {
	t.Helper()
	var all []byte
	files, _ := filepath.Glob(filepath.Join(e.StateDir, "threads", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

func TestSubscribeInterrupted(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-observe"
	r := post(t, e.URL, e.body(th, "run-1", "run pwd, permission please", nil), nil)
	its := interrupts(t, r)
	sess := sessionOf(t, r.Events)
	exec := sess["executionId"].(string)
	before := stateBytes(t, e)
	calls := len(e.Agent.Calls())

	ident := map[string]any{"threadId": th, "runId": "run-1", "rosInvocationId": "invocation-1", "afterSequence": 0}
	o := post(t, subscribeURL(e, exec), ident, nil)
	if o.Status != 200 || len(o.Events) < 3 {
		t.Fatalf("observe: %d %s", o.Status, o.Body)
	}
	if o.Events[0]["type"] != "RUN_STARTED" || o.Events[0]["runId"] != "run-1" || o.Events[1]["name"] != "iac-code.session.v1" {
		t.Fatalf("start %v", types(o.Events))
	}
	if v := o.Events[1]["value"].(map[string]any); v["executionId"] != exec || v["taskId"] != sess["taskId"] {
		t.Fatalf("session %v", v)
	}
	fin := last(o.Events)
	out, _ := fin["outcome"].(map[string]any)
	got, _ := out["interrupts"].([]any)
	if fin["type"] != "RUN_FINISHED" || out["type"] != "interrupt" || len(got) != 1 || got[0].(map[string]any)["id"] != its[0]["id"] {
		t.Fatalf("observation ended %v", fin)
	}
	for _, ev := range o.Events[:len(o.Events)-1] {
		if ev["type"] == "RUN_ERROR" || ev["type"] == "RUN_FINISHED" {
			t.Fatalf("more than one terminal event: %v", types(o.Events))
		}
	}
	assertBalanced(t, o.Events)
	// Read-only: the thread file is unchanged, A2A saw only reads.
	if !bytes.Equal(before, stateBytes(t, e)) {
		t.Fatal("observation changed the thread state")
	}
	for _, c := range e.Agent.Calls()[calls:] {
		if c.Method != "GetTask" && c.Method != "SubscribeToTask" {
			t.Fatalf("observation called %s", c.Method)
		}
	}
	for _, c := range []struct {
		exec string
		body map[string]any
	}{
		{exec, map[string]any{"threadId": th, "runId": "run-9", "rosInvocationId": "invocation-1"}},
		{exec, map[string]any{"threadId": th, "runId": "run-1", "rosInvocationId": "invocation-2"}},
		{"other-execution", map[string]any{"threadId": th, "runId": "run-1", "rosInvocationId": "invocation-1"}},
	} {
		if r := post(t, subscribeURL(e, c.exec), c.body, nil); r.Status != 409 || errorText(t, r) != "Execution observation identity changed" {
			t.Fatalf("%s %v: %d %s", c.exec, c.body, r.Status, r.Body)
		}
	}
	// The thread is not busy, and the interrupt is still answerable.
	assertSuccess(t, post(t, e.URL, resumeBody(e, th, "run-2", allow(its[0]["id"])), nil))

	// A completed execution has no task left to observe (§7.2).
	o = post(t, subscribeURL(e, exec), map[string]any{"threadId": th, "runId": "run-2", "rosInvocationId": "invocation-1"}, nil)
	if o.Status != 404 || errorText(t, o) != "Execution checkpoint unavailable" {
		t.Fatalf("completed: %d %s", o.Status, o.Body)
	}

	refusals := []struct {
		exec   string
		body   any
		status int
		text   string
	}{
		{exec, map[string]any{"threadId": th, "runId": "run-1"}, 400, "Invalid observation identity"},
		{exec, map[string]any{"threadId": th, "runId": "run-1", "rosInvocationId": "invocation-1", "extra": 1}, 400, "Invalid observation identity"},
		{exec, `[1]`, 400, "Invalid observation identity"},
		{exec, map[string]any{"threadId": "thread-none", "runId": "run-1", "rosInvocationId": "invocation-1"}, 404, "Execution checkpoint unavailable"},
	}
	for _, c := range refusals {
		r := post(t, subscribeURL(e, c.exec), c.body, nil)
		if r.Status != c.status || errorText(t, r) != c.text {
			t.Fatalf("%v: %d %s, want %d %q", c.body, r.Status, r.Body, c.status, c.text)
		}
	}
}

// TestSubscribeRunning: an observer of a running execution sees its events
// as they come and the same end as the run; leaving cancels nothing.
func TestSubscribeRunning(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-observe-run"
	run := openStream(t, e.URL, e.body(th, "run-1", "slow", nil))
	sess := run.waitFor(t, "CUSTOM")["value"].(map[string]any)
	ident := map[string]any{"threadId": th, "runId": "run-1", "rosInvocationId": "invocation-1"}
	o := openStream(t, subscribeURL(e, sess["executionId"].(string)), ident)
	o.waitFor(t, "TEXT_MESSAGE_CONTENT")
	if fin := o.rest(t); fin["type"] != "RUN_FINISHED" || fin["outcome"].(map[string]any)["type"] != "success" {
		t.Fatalf("observer ended %v (%v)", fin, types(o.events))
	}
	if fin := run.rest(t); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("run ended %v", fin)
	}

	// An observer that leaves a running task cancels nothing.
	run = openStream(t, e.URL, e.body(th, "run-2", "cancel me", nil))
	sess = run.waitFor(t, "CUSTOM")["value"].(map[string]any)
	o = openStream(t, subscribeURL(e, sess["executionId"].(string)), map[string]any{"threadId": th, "runId": "run-2", "rosInvocationId": "invocation-1"})
	o.waitFor(t, "TEXT_MESSAGE_CONTENT")
	o.res.Body.Close()
	run.waitFor(t, "TEXT_MESSAGE_CONTENT")
	run.waitFor(t, "TEXT_MESSAGE_CONTENT")
	for _, c := range e.Agent.Calls() {
		if c.Method == "CancelTask" {
			t.Fatal("an observer's disconnect cancelled the task")
		}
	}
}
