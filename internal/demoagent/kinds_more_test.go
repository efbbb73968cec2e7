package demoagent

import (
	"strings"
	"testing"
)

func TestMCPWarningAndStatus(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("check mcp", "ctx-mcp", "", cwdMeta("/w"))).all()
	var warned, status bool
	for _, ev := range evs {
		iac := iacOf(ev)
		if w, ok := iac["mcpWarning"].(map[string]any); ok {
			_, text := textOf(ev)
			warned = w["serverName"] == "aliyun-docs" && w["severity"] == "warning" && text == "MCP warning: aliyun-docs: connection refused"
		}
		if s, ok := iac["mcpStatus"].(map[string]any); ok {
			status = len(s["servers"].([]any)) == 2 && len(s["warnings"].([]any)) == 1
		}
	}
	if !warned || !status || stateOf(evs[len(evs)-1]) != stateInputRequired {
		t.Fatalf("warned %v status %v; last %s", warned, status, evs[len(evs)-1].raw)
	}
	pipe := h.stream("SendStreamingMessage", msgParams("check mcp", "ctx-mcp2", "", map[string]any{"cwd": "/w", "run_mode": "pipeline"})).all()
	types := eventTypes(pipe)
	if !strings.Contains(strings.Join(types, ","), "pipeline_started,mcp_status") || stateOf(pipe[len(pipe)-1]) != stateCompleted {
		t.Fatalf("mcp pipeline %v", types)
	}
}

func TestBackupBlockedAndPause(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("backup blocked", "ctx-bb", "", cwdMeta("/w"))).all()
	last := evs[len(evs)-1]
	_, text := textOf(last)
	bb, _ := iacOf(last)["backupBlocked"].(map[string]any)
	if stateOf(last) != stateInputRequired || text != "Session backup failed. Retry after the backup path is available." ||
		bb["reason"] != "terminal" || bb["recoverable"] != true {
		t.Fatalf("backup blocked %s", last.raw)
	}
	// Pipeline: parked without an input projection; any text continues.
	p := h.stream("SendStreamingMessage", msgParams("backup blocked", "ctx-bbp", "", map[string]any{"cwd": "/w", "run_mode": "pipeline"})).all()
	if l := p[len(p)-1]; stateOf(l) != stateInputRequired || iacOf(l)["input"] != nil || eventTypes(p)[len(eventTypes(p))-1] != "backup_blocked" {
		t.Fatalf("backup blocked pipeline %s", l.raw)
	}
	more := h.stream("SendStreamingMessage", msgParams("retry", "ctx-bbp", "", cwdMeta("/w"))).all()
	if eventTypes(more)[0] != "pipeline_resumed" || stateOf(more[len(more)-1]) != stateCompleted || taskIDOf(more) != taskIDOf(p) {
		t.Fatalf("backup retry %v", eventTypes(more))
	}
	// Pause confirmation, in German: the prompt is localised, "abbrechen" cancels.
	ps := h.stream("SendStreamingMessage", msgParams("deploy and pause", "ctx-p", "", map[string]any{"cwd": "/w", "preferredLanguage": "de"})).all()
	l := ps[len(ps)-1]
	env := envelopes(l)[0]
	d := env["data"].(map[string]any)
	if stateOf(l) != stateInputRequired || iacOf(l)["input"] != nil || d["kind"] != "pipeline_pause_confirmation" || !strings.HasPrefix(d["prompt"].(string), "Der Schritt") {
		t.Fatalf("pause %s", l.raw)
	}
	end := h.stream("SendStreamingMessage", msgParams("bitte abbrechen", "ctx-p", "", cwdMeta("/w"))).all()
	if stateOf(end[len(end)-1]) != stateCanceled {
		t.Fatalf("pause cancel %s", end[len(end)-1].raw)
	}
}

func TestRecoverableAndCleanupOnly(t *testing.T) {
	h := newHarness(t, Options{})
	m := h.call("SendStreamingMessage", msgParams("recoverable", "ctx-r", "", cwdMeta("/w")))
	e := m["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if e["code"] != -32602.0 || !strings.HasPrefix(e["message"].(string), "Pipeline already running. Resume task ") ||
		data["recoverableTaskId"] == "" || data["contextId"] != "ctx-r" || data["sidecarStatus"] != "running" {
		t.Fatalf("recoverable %v", m)
	}
	// cleanupOnly in pipeline mode needs a completed handoff.
	m = h.call("SendStreamingMessage", msgParams("clean up", "ctx-c", "", map[string]any{"cwd": "/w", "cleanupOnly": true, "run_mode": "pipeline"}))
	if c, msg := errorOf(t, m); c != -32602 || msg != "Cleanup-only continuation requires a completed Pipeline handoff." {
		t.Fatalf("%v %q", c, msg)
	}
	// Without a handoff in normal mode: nothing to clean.
	evs := h.stream("SendStreamingMessage", msgParams("clean up", "ctx-c", "", map[string]any{"cwd": "/w", "cleanupOnly": true})).all()
	if s := iacOf(evs[len(evs)-1])["cleanupOnly"].(map[string]any); s["status"] != "unavailable" || len(eventTypes(evs)) != 0 {
		t.Fatalf("cleanup without handoff %v", s)
	}
	// After a pipeline handed off: its cleanup, delivered in this task.
	pipe := h.stream("SendStreamingMessage", msgParams("run the pipeline", "ctx-c", "", cwdMeta("/w"))).all()
	from := taskIDOf(pipe)
	evs = h.stream("SendStreamingMessage", msgParams("clean up", "ctx-c", "", map[string]any{"cwd": "/w", "cleanupOnly": true})).all()
	tid := taskIDOf(evs)
	if got := strings.Join(eventTypes(evs), ","); got != "cleanup_started,cleanup_progress,cleanup_completed" {
		t.Fatalf("cleanup events %s", got)
	}
	env := envelopes(evs[len(evs)-3])[0]
	if env["taskId"] != from || env["deliveryTaskId"] != tid || env["scope"] != "cleanup" {
		t.Fatalf("cleanup envelope %v", env)
	}
	for _, ev := range evs[len(evs)-2:] {
		if s := iacOf(ev)["cleanupOnly"].(map[string]any); s["status"] != "completed" || s["resourceCount"] != 1.0 {
			t.Fatalf("cleanup summary %v", s)
		}
	}
	if _, text := textOf(evs[len(evs)-2]); text != "" {
		t.Fatalf("cleanup answered %q", text)
	}
}
