package mapper

import (
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

func batch(t testing.TB, events ...string) *a2a.Event {
	return status(t, "WORKING", "", `{"pipelineBatch":{"schemaVersion":"1.0","events":[`+strings.Join(events, ",")+`]}}`)
}

func TestPipelineBatch(t *testing.T) {
	m := newTestMapper(Config{PipelineSequence: 2})
	candA := `"scope":"candidate_step","candidate":{"id":"c0","runId":"candidate-c0-0-1"},"candidateStep":{"id":"tpl","runId":"cs-tpl-1"}`
	candB := `"scope":"candidate_step","candidate":{"id":"c1","runId":"candidate-c1-1-1"},"candidateStep":{"id":"tpl","runId":"cs-tpl-1"}`
	var out []agui.Event
	out = m.Map(out, batch(t,
		`{"eventId":"e1","sequence":1.0,"eventType":"pipeline_started","data":{}}`, // at or below the persisted cursor
		`{"eventId":"e3","sequence":3.0,"eventType":"pipeline_started","scope":"pipeline","data":{"totalSteps":2.0}}`,
		`{"eventId":"e3","sequence":4.0,"eventType":"pipeline_started","data":{}}`, // duplicate eventId
		`{"eventId":"e7","sequence":7.0,"eventType":"step_started","scope":"step","step":{"id":"gen","runId":"step-gen-1"}}`,
		`{"eventId":"e8","sequence":8.0,"eventType":"message_started","data":{"messageId":"x"}}`,
		`{"eventId":"e9","sequence":9.0,"eventType":"text_delta",`+candA+`,"data":{"text":"A1"}}`,
		`{"eventId":"e10","sequence":10.0,"eventType":"text_delta",`+candB+`,"data":{"text":"B1"}}`,
		`{"eventId":"e11","sequence":11.0,"eventType":"text_delta",`+candA+`,"data":{"text":"A2"}}`,
		`{"eventId":"e12","sequence":12.0,"eventType":"thinking_delta","scope":"step","step":{"id":"gen","runId":"step-gen-1"},"data":{"type":"raw_thinking","text":"hm"}}`,
		`{"eventId":"e13","sequence":13.0,"eventType":"tool_started","scope":"step","step":{"id":"gen"},"data":{"toolUseId":"tu1","toolName":"ros","input":{"b":"ü","a":[1.0]}}}`,
		`{"eventId":"e14","sequence":14.0,"eventType":"tool_result","data":{"toolUseId":"tu1","toolName":"ros","isError":true,"result":{"ok":false}}}`,
		`{"eventId":"e15","sequence":15.0,"eventType":"usage","data":{"provider":"p","model":"m","inputTokens":3.0,"outputTokens":2.0,"totalTokens":5.0}}`,
		`{"eventId":"e16","sequence":16.0,"eventType":"context_usage","data":{"totalTokens":9.0}}`,
		`{"eventId":"e17","sequence":17.0,"eventType":"permission_requested","data":{"toolUseId":"tu2"}}`,
		`{"eventId":"e18","sequence":18.0,"eventType":"backup_committed","data":{}}`,
		`{"eventId":"e19","sequence":19.0,"eventType":"tool_progress","data":{"toolUseId":"tu1"}}`,
	))
	out = m.Map(out, status(t, "WORKING", "", `{"pipeline":{"eventId":"e20","sequence":15.0,"eventType":"pipeline_warning","data":{}}}`)) // stale sequence
	out = m.Map(out, status(t, "WORKING", "", `{"pipeline":{"eventId":"e21","sequence":25.0,"eventType":"step_completed","scope":"step","step":{"id":"gen"}}}`))
	out = m.CloseAll(out)
	pmA := "pipeline-message:pipeline-thread-1:candidate_step:candidate-c0-0-1:cs-tpl-1"
	pmB := "pipeline-message:pipeline-thread-1:candidate_step:candidate-c1-1-1:cs-tpl-1"
	rs := "reasoning-pipeline-message:pipeline-thread-1:step:step-gen-1"
	expectEvents(t, out,
		`{"type":"CUSTOM","name":"iac-code.pipeline.v1","value":{"data":{"totalSteps":2},"eventId":"e3","eventType":"pipeline_started","scope":"pipeline","sequence":3}}`,
		`{"type":"STEP_STARTED","stepName":"gen"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"`+pmA+`","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"`+pmA+`","delta":"A1"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"`+pmB+`","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"`+pmB+`","delta":"B1"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"`+pmA+`","delta":"A2"}`,
		`{"type":"REASONING_START","messageId":"`+rs+`"}`,
		`{"type":"REASONING_MESSAGE_START","messageId":"`+rs+`","role":"reasoning"}`,
		`{"type":"REASONING_MESSAGE_CONTENT","messageId":"`+rs+`","delta":"hm"}`,
		`{"type":"TOOL_CALL_START","toolCallId":"tu1","toolCallName":"ros","parentMessageId":"`+pmA+`"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"tu1","delta":"{\"a\":[1],\"b\":\"ü\"}"}`,
		`{"type":"TOOL_CALL_END","toolCallId":"tu1"}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"tool-result-tu1","toolCallId":"tu1","content":"{\"ok\":false}","role":"tool"}`,
		`{"type":"CUSTOM","name":"iac-code.pipeline.v1","value":{"data":{"toolUseId":"tu1"},"eventId":"e19","eventType":"tool_progress","sequence":19}}`,
		`{"type":"STEP_FINISHED","stepName":"gen"}`,
		`{"type":"REASONING_MESSAGE_END","messageId":"`+rs+`"}`,
		`{"type":"REASONING_END","messageId":"`+rs+`"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"`+pmA+`"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"`+pmB+`"}`,
	)
	if err := verify(out); err != nil {
		t.Fatal(err)
	}
	if m.PipelineSequence() != 25 {
		t.Fatalf("PipelineSequence = %d, want 25", m.PipelineSequence())
	}
	if u := m.Usage(); len(u) != 1 || u[0].TotalTokens != 5 || u[0].Provider != "p" {
		t.Fatalf("usage %+v", u)
	}
	if d := m.DurableOpenSteps(); len(d) != 0 {
		t.Fatalf("durable after step_completed: %v", d)
	}
}

func TestPipelineProgressDropped(t *testing.T) {
	m := newTestMapper(Config{})
	events := make([]string, 500)
	for i := range events {
		events[i] = `{"eventType":"pipeline_progress","sequence":` + itoa(i+1) + `,"data":{"progress":0.5}}`
	}
	if out := m.Map(nil, batch(t, events...)); len(out) != 0 {
		t.Fatalf("pipeline_progress produced %d events", len(out))
	}
	if m.PipelineSequence() != 500 {
		t.Fatalf("sequence %d", m.PipelineSequence())
	}
}

func itoa(i int) string { return string(appendJSON(nil, i)) }

func TestStepFailedAndCandidateSteps(t *testing.T) {
	m := newTestMapper(Config{})
	cand := `"candidate":{"id":"candidate-0","runId":"candidate-candidate-0-0-1"},"candidateStep":{"id":"template_generating","runId":"r"}`
	out := m.Map(nil, batch(t,
		`{"eventId":"a","eventType":"step_started","step":{"id":"s1"}}`,
		`{"eventId":"b","eventType":"step_started","step":{"id":"s1"}}`, // already open in this run
		`{"eventId":"c","eventType":"step_failed","step":{"id":"s1"},"data":{"error":"boom"}}`,
		`{"eventId":"d","eventType":"candidate_step_started",`+cand+`}`,
		`{"eventId":"e","eventType":"candidate_step_failed",`+cand+`}`,
		`{"eventId":"f","eventType":"step_completed","step":{"id":"never"}}`,
	))
	expectEvents(t, out,
		`{"type":"STEP_STARTED","stepName":"s1"}`,
		`{"type":"STEP_FINISHED","stepName":"s1"}`,
		`{"type":"CUSTOM","name":"iac-code.pipeline.v1","value":{"data":{"error":"boom"},"eventId":"c","eventType":"step_failed","step":{"id":"s1"}}}`,
		`{"type":"STEP_STARTED","stepName":"candidate:candidate-0:template_generating"}`,
		`{"type":"STEP_FINISHED","stepName":"candidate:candidate-0:template_generating"}`,
		`{"type":"CUSTOM","name":"iac-code.pipeline.v1","value":{"candidate":{"id":"candidate-0","runId":"candidate-candidate-0-0-1"},"candidateStep":{"id":"template_generating","runId":"r"},"eventId":"e","eventType":"candidate_step_failed"}}`,
	)
}

func TestDurableStepsReopenAndZeroLength(t *testing.T) {
	m := newTestMapper(Config{DurableOpenSteps: []string{"step:b", "candidate:c1:x", "step:a"}})
	out := m.ReopenSteps(nil)
	out = m.Map(out, batch(t,
		`{"eventId":"1","eventType":"input_received","step":{"id":"a"}}`, // already reopened
		`{"eventId":"2","eventType":"step_completed","step":{"id":"a"}}`,
		`{"eventId":"3","eventType":"step_started","step":{"id":"c"}}`))
	out = m.CloseAll(out)
	expectEvents(t, out,
		`{"type":"STEP_STARTED","stepName":"candidate:c1:x"}`,
		`{"type":"STEP_STARTED","stepName":"a"}`,
		`{"type":"STEP_STARTED","stepName":"b"}`,
		`{"type":"STEP_FINISHED","stepName":"a"}`,
		`{"type":"STEP_STARTED","stepName":"c"}`,
		`{"type":"STEP_FINISHED","stepName":"candidate:c1:x"}`,
		`{"type":"STEP_FINISHED","stepName":"b"}`,
		`{"type":"STEP_FINISHED","stepName":"c"}`)
	if got := strings.Join(m.DurableOpenSteps(), ","); got != "candidate:c1:x,step:b,step:c" {
		t.Fatalf("durable after CloseAll: %s", got)
	}

	// A durably open step finished before it was reopened: zero-length pair.
	m = newTestMapper(Config{DurableOpenSteps: []string{"step:z"}})
	expectEvents(t, m.Map(nil, batch(t, `{"eventId":"1","eventType":"step_completed","step":{"id":"z"}}`)),
		`{"type":"STEP_STARTED","stepName":"z"}`,
		`{"type":"STEP_FINISHED","stepName":"z"}`)
	if d := m.DurableOpenSteps(); len(d) != 0 {
		t.Fatalf("durable: %v", d)
	}
}

func TestCloseAllOrder(t *testing.T) {
	m := newTestMapper(Config{})
	out := m.Map(nil, batch(t,
		`{"eventId":"1","eventType":"step_started","step":{"id":"s2"}}`,
		`{"eventId":"2","eventType":"step_started","step":{"id":"s1"}}`,
		`{"eventId":"3","eventType":"text_delta","scope":"x","data":{"text":"t"}}`,
		`{"eventId":"4","eventType":"text_delta","scope":"a","data":{"text":"t"}}`,
		`{"eventId":"5","eventType":"thinking_delta","scope":"z","data":{"type":"raw_thinking","text":"r"}}`,
		`{"eventId":"6","eventType":"thinking_delta","scope":"b","data":{"type":"raw_thinking","text":"r"}}`))
	out = m.Map(out, status(t, "WORKING", "", `{"tool":{"status":"started","toolUseId":"tb","name":"n"}}`))
	out = m.Map(out, status(t, "WORKING", "", `{"tool":{"status":"started","toolUseId":"ta","name":"n"}}`))
	n := len(out)
	out = m.CloseAll(out)
	p := "pipeline-message:pipeline-thread-1:"
	expectEvents(t, out[n:],
		`{"type":"REASONING_MESSAGE_END","messageId":"reasoning-`+p+`b"}`,
		`{"type":"REASONING_END","messageId":"reasoning-`+p+`b"}`,
		`{"type":"REASONING_MESSAGE_END","messageId":"reasoning-`+p+`z"}`,
		`{"type":"REASONING_END","messageId":"reasoning-`+p+`z"}`,
		`{"type":"TOOL_CALL_END","toolCallId":"ta"}`,
		`{"type":"TOOL_CALL_END","toolCallId":"tb"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"`+p+`a"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"`+p+`x"}`,
		`{"type":"STEP_FINISHED","stepName":"s1"}`,
		`{"type":"STEP_FINISHED","stepName":"s2"}`)
	if err := verify(out); err != nil {
		t.Fatal(err)
	}
	if out := m.CloseAll(nil); len(out) != 0 {
		t.Fatalf("second CloseAll: %s", render(t, out))
	}
}

func TestMapPipelineStateCatchUp(t *testing.T) {
	m := newTestMapper(Config{PipelineSequence: 40})
	m.Map(nil, status(t, "WORKING", "", `{"pipeline":{"eventId":"e41","sequence":41.0,"eventType":"pipeline_resumed","data":{}}}`))
	st := &a2a.PipelineState{
		Snapshot: map[string]any{"schemaVersion": "1.1", "pipelineRunId": "pr-9", "lastSequence": 50.0},
		Events: []map[string]any{
			{"eventId": "e41", "sequence": 41.0, "eventType": "pipeline_resumed", "data": map[string]any{}},
			{"eventId": "e42", "sequence": 42.0, "eventType": "text_delta", "scope": "candidate", "candidate": map[string]any{"runId": "cand-1"}, "data": map[string]any{"text": "other candidate"}},
			{"eventId": "e42", "sequence": 42.0, "eventType": "text_delta", "data": map[string]any{"text": "dup"}},
			{"eventId": "e39", "sequence": 39.0, "eventType": "pipeline_warning"}, // new eventId: kept despite its sequence
			{"sequence": 45.0, "eventType": "step_started", "step": map[string]any{"id": "deploy"}},
			{"sequence": 30.0, "eventType": "pipeline_warning"}, // no eventId, at or below the cursor
		},
	}
	out := m.MapPipelineState(nil, st)
	out = m.CloseAll(out)
	pm := "pipeline-message:pr-9:candidate:cand-1"
	expectEvents(t, out,
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"pipeline:pr-9","activityType":"iac-code.pipeline.v1","content":{"pipelineRunId":"pr-9","schemaVersion":1,"snapshot":{"lastSequence":50,"pipelineRunId":"pr-9","schemaVersion":"1.1"}},"replace":true}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"`+pm+`","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"`+pm+`","delta":"other candidate"}`,
		`{"type":"CUSTOM","name":"iac-code.pipeline.v1","value":{"eventId":"e39","eventType":"pipeline_warning","sequence":39}}`,
		`{"type":"STEP_STARTED","stepName":"deploy"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"`+pm+`"}`,
		`{"type":"STEP_FINISHED","stepName":"deploy"}`)
	if m.PipelineSequence() != 50 {
		t.Fatalf("cursor %d, want 50 (snapshot.lastSequence)", m.PipelineSequence())
	}
	// A snapshot behind the cursor does not move it back.
	m.MapPipelineState(nil, &a2a.PipelineState{Snapshot: map[string]any{"lastSequence": 3.0}})
	if m.PipelineSequence() != 50 {
		t.Fatalf("cursor moved back to %d", m.PipelineSequence())
	}
	// Events beyond the snapshot raise the cursor.
	m.MapPipelineState(nil, &a2a.PipelineState{Snapshot: map[string]any{"lastSequence": 51.0}, Events: []map[string]any{{"eventId": "e60", "sequence": 60.0, "eventType": "x"}}})
	if m.PipelineSequence() != 60 {
		t.Fatalf("cursor %d, want 60", m.PipelineSequence())
	}
	if out := m.MapPipelineState(nil, &a2a.PipelineState{}); len(out) != 0 {
		t.Fatalf("no snapshot: %s", render(t, out))
	}
}
