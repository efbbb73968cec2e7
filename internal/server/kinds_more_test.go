package server_test

import (
	"slices"
	"strings"
	"testing"
)

// The embedded agent's rarer frames through the real adapter: what
// protocol.md §4 maps each to.

// pipelineCustom returns the eventType of every CUSTOM
// iac-code.pipeline.v1 event of evs.
func pipelineCustom(evs []map[string]any) []string {
	var out []string
	for _, ev := range evs {
		if ev["type"] == "CUSTOM" && ev["name"] == "iac-code.pipeline.v1" {
			out = append(out, ev["value"].(map[string]any)["eventType"].(string))
		}
	}
	return out
}

// TestMCPWarningMapping: normal mode shows the "MCP warning: …" status
// text as text (§4.7) and reads nothing of mcpWarning/mcpStatus (§4.6);
// pipeline mode forwards the mcp_status envelope as a custom event (§4.12).
func TestMCPWarningMapping(t *testing.T) {
	e := newEnv(t, envOptions{})
	r := post(t, e.URL, e.body("th-mcp", "run-1", "check mcp", nil), nil)
	assertSuccess(t, r)
	assertBalanced(t, r.Events)
	want := "MCP warning: aliyun-docs: connection refused" +
		"The aliyun-docs MCP server is unavailable; continuing with the built-in tools."
	if got := contentOf(r.Events); got != want {
		t.Fatalf("text %q", got)
	}
	if c := pipelineCustom(r.Events); len(c) != 0 {
		t.Fatalf("normal mode custom events %v", c)
	}
	p := post(t, e.URL, e.body("th-mcp-p", "run-1", "check mcp", map[string]any{"runMode": "pipeline"}), nil)
	assertSuccess(t, p)
	if c := pipelineCustom(p.Events); !slices.Equal(c, []string{"pipeline_started", "mcp_status", "pipeline_completed"}) {
		t.Fatalf("pipeline custom events %v", c)
	}
	for _, ev := range p.Events {
		if v, ok := ev["value"].(map[string]any); ok && v["eventType"] == "mcp_status" {
			if servers := v["data"].(map[string]any)["servers"].([]any); len(servers) != 2 {
				t.Fatalf("mcp_status %v", v)
			}
		}
	}
}

// TestBackupBlockedMapping: a blocked backup ends the turn (INPUT_REQUIRED
// without an input is not an interrupt, §4.4 step 7): normal mode shows
// iac-code's text; pipeline mode shows backup_blocked, and the next
// message continues the same A2A task from its journal.
func TestBackupBlockedMapping(t *testing.T) {
	e := newEnv(t, envOptions{})
	r := post(t, e.URL, e.body("th-bb", "run-1", "backup blocked", nil), nil)
	assertSuccess(t, r)
	if got := contentOf(r.Events); !strings.HasSuffix(got, "Session backup failed. Retry after the backup path is available.") {
		t.Fatalf("text %q", got)
	}
	const th = "th-bb-p"
	p := post(t, e.URL, e.body(th, "run-1", "backup blocked", map[string]any{"runMode": "pipeline"}), nil)
	assertSuccess(t, p)
	if c := pipelineCustom(p.Events); !slices.Equal(c, []string{"pipeline_started", "backup_blocked"}) {
		t.Fatalf("custom events %v", c)
	}
	task := sessionOf(t, p.Events)["taskId"]
	next := post(t, e.URL, e.body(th, "run-2", "retry", map[string]any{"runMode": "pipeline"}), nil)
	assertSuccess(t, next)
	if c := pipelineCustom(next.Events); !slices.Equal(c, []string{"pipeline_resumed", "pipeline_completed"}) {
		t.Fatalf("custom events after retry %v", c)
	}
	if got := sessionOf(t, next.Events)["taskId"]; got != task {
		t.Fatalf("retry ran on task %v, want %v", got, task)
	}
}

// TestPauseConfirmationMapping: the pause is no interrupt (no input
// projection): the run ends with success; "continue" as the next turn
// resumes the same task, a cancel instruction ends it CANCELLED.
func TestPauseConfirmationMapping(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, c := range []struct {
		answer string
		end    func(t *testing.T, r *response)
	}{
		{"continue", func(t *testing.T, r *response) { assertSuccess(t, r) }},
		{"cancel it", func(t *testing.T, r *response) { assertRunError(t, r, "CANCELLED", "The execution was cancelled.") }},
	} {
		th := "th-pause-" + strings.Fields(c.answer)[0]
		p := post(t, e.URL, e.body(th, "run-1", "deploy, pause if unsure", map[string]any{"runMode": "pipeline"}), nil)
		assertSuccess(t, p)
		if c := pipelineCustom(p.Events); !slices.Equal(c, []string{"pipeline_started", "stack_progress"}) {
			t.Fatalf("custom events %v", c)
		}
		if o := last(p.Events)["outcome"].(map[string]any); o["interrupts"] != nil {
			t.Fatalf("pause became an interrupt: %v", o)
		}
		task := sessionOf(t, p.Events)["taskId"]
		r := post(t, e.URL, e.body(th, "run-2", c.answer, map[string]any{"runMode": "pipeline"}), nil)
		c.end(t, r)
		if got := sessionOf(t, r.Events)["taskId"]; got != task {
			t.Fatalf("%s ran on task %v, want %v", c.answer, got, task)
		}
	}
}

// TestRecoverableTaskErrorMapping: iac-code's -32602 with a
// recoverableTaskId object is a JSON-RPC error before the first frame:
// RUN_ERROR A2A_UNAVAILABLE (§4.4 step 8), and no task to cancel.
func TestRecoverableTaskErrorMapping(t *testing.T) {
	e := newEnv(t, envOptions{})
	r := post(t, e.URL, e.body("th-rec", "run-1", "recoverable", map[string]any{"runMode": "pipeline"}), nil)
	assertRunError(t, r, "A2A_UNAVAILABLE", "The local A2A execution service is unavailable.")
	if !slices.Equal(types(r.Events), []string{"RUN_STARTED", "RUN_ERROR"}) {
		t.Fatalf("events %v", types(r.Events))
	}
	if n := countMethod(e.Agent.Calls(), "CancelTask"); n != 0 {
		t.Fatalf("%d CancelTask calls", n)
	}
	// The thread is not stuck: the next turn runs.
	assertSuccess(t, post(t, e.URL, e.body("th-rec", "run-2", "Create a VPC", nil), nil))
}

// TestCleanupOnlyMapping: after a pipeline handed off, a cleanupOnly turn
// shows the cleanup envelopes A2A delivers in the new task as custom
// events and ends with success; in pipeline mode without a handoff A2A
// refuses it with a JSON-RPC error (A2A_UNAVAILABLE).
func TestCleanupOnlyMapping(t *testing.T) {
	e := newEnv(t, envOptions{})
	refused := post(t, e.URL, e.body("th-clean-p", "run-1", "clean up", map[string]any{"runMode": "pipeline", "cleanupOnly": true}), nil)
	assertRunError(t, refused, "A2A_UNAVAILABLE", "The local A2A execution service is unavailable.")

	const th = "th-clean"
	assertSuccess(t, post(t, e.URL, e.body(th, "run-1", "Run the pipeline", map[string]any{"runMode": "pipeline"}), nil))
	r := post(t, e.URL, e.body(th, "run-2", "clean up", map[string]any{"runMode": "normal", "cleanupOnly": true}), nil)
	assertSuccess(t, r)
	assertBalanced(t, r.Events)
	if c := pipelineCustom(r.Events); !slices.Equal(c, []string{"cleanup_started", "cleanup_progress", "cleanup_completed"}) {
		t.Fatalf("custom events %v", c)
	}
	if got := contentOf(r.Events); got != "" {
		t.Fatalf("cleanup turn answered %q", got)
	}
	calls := e.Agent.Calls()
	c := calls[len(calls)-1]
	if c.TaskID != "" || !slices.Contains(c.MetadataKeys, "cleanupOnly") {
		t.Fatalf("cleanup call %+v", c)
	}
}
