package mapper

import (
	"strconv"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

// BenchmarkMapTextDelta maps one plain A2A text-delta frame of an open
// message into a reused buffer.
func BenchmarkMapTextDelta(b *testing.B) {
	m := New(Config{ThreadID: "thread-1", RunID: "run-1"})
	ev := status(b, "WORKING", agentText("task-1-message", "Here is the next chunk of text. "), `{"iacCodeSessionId":"S"}`)
	dst := m.Map(make([]agui.Event, 0, 8), ev)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst = m.Map(dst[:0], ev)
	}
}

// BenchmarkMapPipelineBatch maps a 64-envelope batch (the upstream default
// batch size) of parallel candidate text deltas with fresh sequences.
func BenchmarkMapPipelineBatch(b *testing.B) {
	m := New(Config{ThreadID: "thread-1", RunID: "run-1"})
	const n = 64
	envs := make([]map[string]any, n)
	list := make([]any, n)
	for i := range envs {
		c := strconv.Itoa(i % 3)
		envs[i] = map[string]any{
			"eventType": "text_delta", "scope": "candidate_step",
			"candidate":     map[string]any{"id": "c" + c, "runId": "candidate-c" + c + "-0-1"},
			"candidateStep": map[string]any{"id": "tpl", "runId": "cs-tpl-1"},
			"data":          map[string]any{"text": "chunk "},
		}
		list[i] = envs[i]
	}
	ev := &a2a.Event{Kind: a2a.KindStatusUpdate, TaskID: "task-1", ContextID: "ctx-1", Status: &a2a.Status{State: "TASK_STATE_WORKING"},
		Metadata: map[string]any{"iac_code": map[string]any{"pipelineBatch": map[string]any{"events": list}}}}
	dst := make([]agui.Event, 0, 2*n)
	seq := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, e := range envs {
			seq++
			e["sequence"] = float64(seq) // without an eventId, a new sequence is a new envelope
		}
		dst = m.Map(dst[:0], ev)
	}
}
