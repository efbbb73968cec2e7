package mapper

import (
	"math/rand"
	"strconv"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

// randomEnvelope builds a pipeline envelope with colliding ids and
// sequences that repeat, go back and jump.
func randomEnvelope(r *rand.Rand, seq *int) map[string]any {
	pick := func(vals ...string) string { return vals[r.Intn(len(vals))] }
	*seq += r.Intn(3) - 1 // duplicates, stale and gaps
	env := map[string]any{
		"eventId":   "e" + strconv.Itoa(r.Intn(40)),
		"sequence":  float64(*seq),
		"eventType": pick("text_delta", "thinking_delta", "tool_started", "tool_result", "step_started", "step_completed", "step_failed", "candidate_step_started", "candidate_step_completed", "candidate_step_failed", "input_received", "pipeline_started", "pipeline_progress", "usage"),
		"scope":     pick("step", "candidate", "candidate_step", ""),
		"data":      map[string]any{"text": pick("a", "b", ""), "type": "raw_thinking", "toolUseId": pick("t1", "t2", ""), "input": map[string]any{"k": 1.0}},
	}
	if r.Intn(2) == 0 {
		env["step"] = map[string]any{"id": pick("s1", "s2"), "runId": pick("r1", "r2")}
	}
	if r.Intn(2) == 0 {
		env["candidate"] = map[string]any{"id": pick("c0", "c1"), "runId": pick("cr0", "cr1")}
		env["candidateStep"] = map[string]any{"id": pick("s1", "tpl")}
	}
	return env
}

// randomItem builds one A2A item from a small vocabulary so that ids,
// steps and candidates collide often.
func randomItem(r *rand.Rand, seq *int) *a2a.Event {
	pick := func(vals ...string) string { return vals[r.Intn(len(vals))] }
	ic := map[string]any{}
	ev := &a2a.Event{Kind: a2a.KindStatusUpdate, TaskID: "task-1", ContextID: "ctx-1", Status: &a2a.Status{State: "TASK_STATE_WORKING"}, Metadata: map[string]any{"iac_code": ic}}
	envelope := func() map[string]any { return randomEnvelope(r, seq) }
	switch r.Intn(7) {
	case 0:
		ev.Status.Message = &a2a.Message{MessageID: pick("m1", "m2", ""), Role: pick("ROLE_AGENT", ""), Parts: []a2a.Part{{Text: pick("x", "y", "")}}}
		if r.Intn(4) == 0 {
			ic["assistantFinal"] = map[string]any{"complete": true}
		}
	case 1:
		ic["thinking"] = map[string]any{"type": "raw_thinking", "text": pick("t", "u")}
	case 2:
		ic["tool"] = map[string]any{"status": pick("started", "input_complete", "completed", "failed", "progress", "input_delta"), "toolUseId": pick("t1", "t2", "t3", ""), "name": "bash"}
	case 3:
		ic["pipeline"] = envelope()
	case 4:
		list := make([]any, r.Intn(5))
		for i := range list {
			list[i] = envelope()
		}
		ic["pipelineBatch"] = map[string]any{"events": list}
	case 5:
		ev.Kind, ev.Status, ev.Metadata = a2a.KindTask, &a2a.Status{State: "TASK_STATE_WORKING"}, nil
		ev.History = []a2a.Message{{MessageID: pick("h1", "m1"), Role: "ROLE_AGENT", Parts: []a2a.Part{{Text: "h"}}}}
	case 6:
		ic["usage"] = map[string]any{"inputTokens": 1.0}
	}
	return ev
}

// TestPropertyBalancedSpans: whatever the A2A items, the mapped stream
// followed by CloseAll passes the AG-UI 1.0 verifier and leaves nothing open.
func TestPropertyBalancedSpans(t *testing.T) {
	counts := map[agui.EventType]int{}
	for seed := int64(1); seed <= 400; seed++ {
		r := rand.New(rand.NewSource(seed))
		var durable []string
		for _, k := range []string{"step:s1", "step:s2", "candidate:c0:s1", "candidate:c1:tpl"} {
			if r.Intn(2) == 0 {
				durable = append(durable, k)
			}
		}
		m := newTestMapper(Config{DurableOpenSteps: durable, PipelineSequence: int64(r.Intn(3))})
		var out []agui.Event
		if r.Intn(2) == 0 {
			out = m.ReopenSteps(out)
		}
		seq := 0
		for i := 0; i < 60; i++ {
			switch r.Intn(12) {
			case 0:
				out = m.MapTaskSnapshot(out, randomItem(r, &seq))
			case 1:
				st := &a2a.PipelineState{Snapshot: map[string]any{"lastSequence": float64(seq)}}
				for j := 0; j < 3; j++ {
					st.Events = append(st.Events, randomEnvelope(r, &seq))
				}
				out = m.MapPipelineState(out, st)
			case 2:
				out = m.ToolResult(out, "t1", "done")
			default:
				out = m.Map(out, randomItem(r, &seq))
			}
		}
		out = m.CloseAll(out)
		for _, e := range out {
			counts[e.EventType()]++
		}
		if err := verify(out); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, render(t, out))
		}
	}
	// The generator must reach every span kind, or the property is vacuous.
	for _, typ := range []agui.EventType{agui.TypeTextMessageEnd, agui.TypeToolCallEnd, agui.TypeReasoningEnd, agui.TypeStepFinished, agui.TypeActivitySnapshot} {
		if counts[typ] < 50 {
			t.Errorf("only %d %s events generated", counts[typ], typ)
		}
	}
}

// TestVerifierRejects keeps the verifier honest: it must catch what the
// AG-UI client rejects.
func TestVerifierRejects(t *testing.T) {
	bad := [][]agui.Event{
		{&agui.TextMessageContent{MessageID: "m"}},
		{&agui.TextMessageStart{MessageID: "m"}, &agui.TextMessageStart{MessageID: "m"}},
		{&agui.StepFinished{StepName: "s"}},
		{&agui.ToolCallStart{ToolCallID: "t"}},
		{&agui.ReasoningStart{MessageID: "r"}, &agui.ReasoningMessageEnd{MessageID: "r"}},
	}
	for i, evs := range bad {
		if verify(evs) == nil {
			t.Errorf("case %d accepted", i)
		}
	}
}
