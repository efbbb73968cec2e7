package demoagent

import (
	"strings"
	"testing"
)

// pipelineTexts joins the text_delta envelopes of evs.
func pipelineTexts(evs []sseEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		for _, env := range envelopes(ev) {
			if env["eventType"] == "text_delta" {
				b.WriteString(env["data"].(map[string]any)["text"].(string))
			}
		}
	}
	return b.String()
}

// TestGuidanceSteersRunningPipeline: a message naming the running pipeline
// task is classified as guidance on the task's stream and on the sender's
// own short stream, and the guided pipeline applies it once per
// guidance_id.
func TestGuidanceSteersRunningPipeline(t *testing.T) {
	h := newHarness(t, Options{})
	main := h.stream("SendStreamingMessage", msgParams("Run a guided pipeline", "ctx-g", "", map[string]any{"cwd": "/w", "preferredLanguage": "fr"}))
	var head []sseEvent
	for !strings.Contains(pipelineTexts(head), "Planification du réseau") {
		ev, ok := main.next()
		if !ok {
			t.Fatal("guided pipeline ended before waiting")
		}
		head = append(head, ev)
	}
	tid := taskIDOf(head)
	guide := func(text, gid string) []sseEvent {
		p := msgParams(text, "ctx-g", tid, map[string]any{"cwd": "/w", "guidance_id": gid, "run_mode": "pipeline"})
		return h.stream("SendStreamingMessage", p).all()
	}
	first := guide("use two zones", "g-1")
	if len(first) != 1 || stateOf(first[0]) != stateWorking || taskIDOf(first) != tid {
		t.Fatalf("guidance answer: %d frames %v", len(first), first)
	}
	envs := envelopes(first[0])
	if len(envs) != 2 || envs[0]["eventType"] != "interrupt_received" || envs[1]["eventType"] != "interrupt_classified" {
		t.Fatalf("guidance envelopes %v", envs)
	}
	if d := envs[0]["data"].(map[string]any); d["messageLength"] != 13.0 {
		t.Fatalf("interrupt_received %v", d)
	}
	if d := envs[1]["data"].(map[string]any); d["action"] != "supplement" || d["paused"] != false {
		t.Fatalf("interrupt_classified %v", d)
	}
	// A retry under the same guidance id is acknowledged, not applied:
	// the compute step still waits, for the next guidance.
	again := guide("use two zones", "g-1")
	if d := envelopes(again[0])[1]["data"].(map[string]any); d["action"] != "ignored" {
		t.Fatalf("retried guidance classified %v", d)
	}
	guide("use ecs.g7.large", "g-2")
	rest := main.all()
	want := "Indication appliquée : use two zones Planification du calcul ; envoyez des indications pour l'orienter. " +
		"Indication appliquée : use ecs.g7.large "
	if got := pipelineTexts(rest); got != want {
		t.Fatalf("applied text %q", got)
	}
	types := eventTypes(rest)
	if strings.Count(strings.Join(types, ","), "interrupt_received") != 3 || types[len(types)-1] != "backup_committed" {
		t.Fatalf("main stream types %v", types)
	}
	if stateOf(rest[len(rest)-1]) != stateCompleted {
		t.Fatalf("final %s", rest[len(rest)-1].raw)
	}
	// The pipeline is over: the next guidance names a terminal task.
	if c, msg := errorOf(t, h.call("SendStreamingMessage", msgParams("later", "ctx-g", tid, cwdMeta("/w")))); c != -32602 || !strings.Contains(msg, "terminal state") {
		t.Fatalf("%v %q", c, msg)
	}
}
