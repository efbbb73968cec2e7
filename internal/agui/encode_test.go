package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

const ts = int64(1767225600000)

func TestAppendEventGolden(t *testing.T) {
	usage := []TokenUsage{
		{Provider: "dashscope", Model: "qwen-max", InputTokens: 10, OutputTokens: 5, TotalTokens: 15, CachedInputTokens: 2},
		{InputTokens: 1, OutputTokens: 0, TotalTokens: 1},
	}
	const usageJSON = `"usage":[{"provider":"dashscope","model":"qwen-max","inputTokens":10,"outputTokens":5,"totalTokens":15,"cachedInputTokens":2},{"inputTokens":1,"outputTokens":0,"totalTokens":1,"cachedInputTokens":0}]`
	permission := Interrupt{
		ID:         "permission-1",
		Reason:     "tool_call",
		Message:    "Run a local shell command Allow once?",
		ToolCallID: "toolu_1",
		ResponseSchema: map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"decision": map[string]any{"type": "string", "enum": []any{"allow_once", "deny"}}},
			"required":             []any{"decision"},
			"additionalProperties": false,
		},
		Metadata: map[string]any{"schemaVersion": 1, "kind": "permission", "safeSummary": `bash: {"command":"a<b&c"}`},
	}
	cases := []struct {
		name string
		ev   Event
		want string
	}{
		{"run started", &RunStarted{ThreadID: "t1", RunID: "r1"},
			`{"type":"RUN_STARTED","timestamp":1767225600000,"threadId":"t1","runId":"r1"}`},
		{"run started parent", &RunStarted{ThreadID: "t1", RunID: "r2", ParentRunID: "r1"},
			`{"type":"RUN_STARTED","timestamp":1767225600000,"threadId":"t1","runId":"r2","parentRunId":"r1"}`},
		{"run finished success", &RunFinished{ThreadID: "t1", RunID: "r1", Outcome: Outcome{Type: OutcomeSuccess}},
			`{"type":"RUN_FINISHED","timestamp":1767225600000,"threadId":"t1","runId":"r1","outcome":{"type":"success"}}`},
		{"run finished zero outcome is success", &RunFinished{ThreadID: "t1", RunID: "r1"},
			`{"type":"RUN_FINISHED","timestamp":1767225600000,"threadId":"t1","runId":"r1","outcome":{"type":"success"}}`},
		{"run finished success ignores interrupts", &RunFinished{ThreadID: "t1", RunID: "r1", Outcome: Outcome{Type: OutcomeSuccess, Interrupts: []Interrupt{permission}}},
			`{"type":"RUN_FINISHED","timestamp":1767225600000,"threadId":"t1","runId":"r1","outcome":{"type":"success"}}`},
		{"run finished usage", &RunFinished{ThreadID: "t1", RunID: "r1", Outcome: Outcome{Type: OutcomeSuccess}, Usage: usage},
			`{"type":"RUN_FINISHED","timestamp":1767225600000,"threadId":"t1","runId":"r1","outcome":{"type":"success"},` + usageJSON + `}`},
		{"run finished interrupt", &RunFinished{ThreadID: "t1", RunID: "r1", Outcome: Outcome{Type: OutcomeInterrupt, Interrupts: []Interrupt{permission, {ID: "q-1", Reason: "input_required"}}}},
			`{"type":"RUN_FINISHED","timestamp":1767225600000,"threadId":"t1","runId":"r1","outcome":{"type":"interrupt","interrupts":[` +
				`{"id":"permission-1","reason":"tool_call","message":"Run a local shell command Allow once?","toolCallId":"toolu_1",` +
				`"responseSchema":{"additionalProperties":false,"properties":{"decision":{"enum":["allow_once","deny"],"type":"string"}},"required":["decision"],"type":"object"},` +
				`"metadata":{"kind":"permission","safeSummary":"bash: {\"command\":\"a<b&c\"}","schemaVersion":1}},` +
				`{"id":"q-1","reason":"input_required","responseSchema":{}}]}}`},
		{"run error", &RunError{Message: "The A2A execution failed.", Code: "A2A_EXECUTION_FAILED"},
			`{"type":"RUN_ERROR","timestamp":1767225600000,"message":"The A2A execution failed.","code":"A2A_EXECUTION_FAILED"}`},
		{"run error usage", &RunError{Message: "The execution was cancelled.", Code: "CANCELLED", Usage: usage[1:]},
			`{"type":"RUN_ERROR","timestamp":1767225600000,"message":"The execution was cancelled.","code":"CANCELLED","usage":[{"inputTokens":1,"outputTokens":0,"totalTokens":1,"cachedInputTokens":0}]}`},
		{"run error field", &RunError{Message: "The interrupt response payload is invalid.", Code: "RESUME_PAYLOAD_INVALID", Field: "/resume/0/payload/freeText", Reason: "is required"},
			`{"type":"RUN_ERROR","timestamp":1767225600000,"message":"The interrupt response payload is invalid.","code":"RESUME_PAYLOAD_INVALID","metadata":{"field":"/resume/0/payload/freeText","reason":"is required"}}`},
		{"step started", &StepStarted{StepName: "plan"},
			`{"type":"STEP_STARTED","timestamp":1767225600000,"stepName":"plan"}`},
		{"step finished", &StepFinished{StepName: "plan"},
			`{"type":"STEP_FINISHED","timestamp":1767225600000,"stepName":"plan"}`},
		{"text start", &TextMessageStart{MessageID: "m1", Role: "assistant"},
			`{"type":"TEXT_MESSAGE_START","timestamp":1767225600000,"messageId":"m1","role":"assistant"}`},
		{"text start default role", &TextMessageStart{MessageID: "m1"},
			`{"type":"TEXT_MESSAGE_START","timestamp":1767225600000,"messageId":"m1","role":"assistant"}`},
		{"text content", &TextMessageContent{MessageID: "m1", Delta: "Hello"},
			`{"type":"TEXT_MESSAGE_CONTENT","timestamp":1767225600000,"messageId":"m1","delta":"Hello"}`},
		{"text content empty delta", &TextMessageContent{MessageID: "m1"},
			`{"type":"TEXT_MESSAGE_CONTENT","timestamp":1767225600000,"messageId":"m1","delta":""}`},
		{"text end", &TextMessageEnd{MessageID: "m1"},
			`{"type":"TEXT_MESSAGE_END","timestamp":1767225600000,"messageId":"m1"}`},
		{"reasoning start", &ReasoningStart{MessageID: "reasoning-m1"},
			`{"type":"REASONING_START","timestamp":1767225600000,"messageId":"reasoning-m1"}`},
		{"reasoning message start", &ReasoningMessageStart{MessageID: "reasoning-m1", Role: "reasoning"},
			`{"type":"REASONING_MESSAGE_START","timestamp":1767225600000,"messageId":"reasoning-m1","role":"reasoning"}`},
		{"reasoning message start forces role", &ReasoningMessageStart{MessageID: "reasoning-m1", Role: "assistant"},
			`{"type":"REASONING_MESSAGE_START","timestamp":1767225600000,"messageId":"reasoning-m1","role":"reasoning"}`},
		{"reasoning content", &ReasoningMessageContent{MessageID: "reasoning-m1", Delta: "think"},
			`{"type":"REASONING_MESSAGE_CONTENT","timestamp":1767225600000,"messageId":"reasoning-m1","delta":"think"}`},
		{"reasoning message end", &ReasoningMessageEnd{MessageID: "reasoning-m1"},
			`{"type":"REASONING_MESSAGE_END","timestamp":1767225600000,"messageId":"reasoning-m1"}`},
		{"reasoning end", &ReasoningEnd{MessageID: "reasoning-m1"},
			`{"type":"REASONING_END","timestamp":1767225600000,"messageId":"reasoning-m1"}`},
		{"tool start", &ToolCallStart{ToolCallID: "c1", ToolCallName: "bash"},
			`{"type":"TOOL_CALL_START","timestamp":1767225600000,"toolCallId":"c1","toolCallName":"bash"}`},
		{"tool start parent", &ToolCallStart{ToolCallID: "c1", ToolCallName: "bash", ParentMessageID: "m1"},
			`{"type":"TOOL_CALL_START","timestamp":1767225600000,"toolCallId":"c1","toolCallName":"bash","parentMessageId":"m1"}`},
		{"tool args", &ToolCallArgs{ToolCallID: "c1", Delta: `{"command":"pwd"}`},
			`{"type":"TOOL_CALL_ARGS","timestamp":1767225600000,"toolCallId":"c1","delta":"{\"command\":\"pwd\"}"}`},
		{"tool end", &ToolCallEnd{ToolCallID: "c1"},
			`{"type":"TOOL_CALL_END","timestamp":1767225600000,"toolCallId":"c1"}`},
		{"tool result", &ToolCallResult{MessageID: "tool-result-c1", ToolCallID: "c1", Content: "/srv\n", Role: "tool"},
			`{"type":"TOOL_CALL_RESULT","timestamp":1767225600000,"messageId":"tool-result-c1","toolCallId":"c1","content":"/srv\n","role":"tool"}`},
		{"tool result default role", &ToolCallResult{MessageID: "tool-result-c1", ToolCallID: "c1"},
			`{"type":"TOOL_CALL_RESULT","timestamp":1767225600000,"messageId":"tool-result-c1","toolCallId":"c1","content":"","role":"tool"}`},
		{"activity snapshot", &ActivitySnapshot{MessageID: "pipeline:p1", ActivityType: "iac-code.pipeline.v1",
			Content: map[string]any{"schemaVersion": 1, "pipelineRunId": "p1", "snapshot": map[string]any{"steps": []any{}}}, Replace: true},
			`{"type":"ACTIVITY_SNAPSHOT","timestamp":1767225600000,"messageId":"pipeline:p1","activityType":"iac-code.pipeline.v1","content":{"pipelineRunId":"p1","schemaVersion":1,"snapshot":{"steps":[]}},"replace":true}`},
		{"activity snapshot nil content", &ActivitySnapshot{MessageID: "a", ActivityType: "x"},
			`{"type":"ACTIVITY_SNAPSHOT","timestamp":1767225600000,"messageId":"a","activityType":"x","content":{},"replace":false}`},
		{"custom object", &Custom{Name: "iac-code.session.v1", Value: map[string]any{"taskId": "task-1", "sessionId": nil}},
			`{"type":"CUSTOM","timestamp":1767225600000,"name":"iac-code.session.v1","value":{"sessionId":null,"taskId":"task-1"}}`},
		{"custom nil value", &Custom{Name: "x"},
			`{"type":"CUSTOM","timestamp":1767225600000,"name":"x","value":null}`},
		{"custom nil raw", &Custom{Name: "x", Value: RawJSON(nil)},
			`{"type":"CUSTOM","timestamp":1767225600000,"name":"x","value":null}`},
		{"custom raw json compacted", &Custom{Name: "x", Value: RawJSON("{\n  \"a\": [1, 2],\n  \"b\": \"<\u2028>\"\n}")},
			`{"type":"CUSTOM","timestamp":1767225600000,"name":"x","value":{"a":[1,2],"b":"<\u2028>"}}`},
		{"custom string", &Custom{Name: "x", Value: "a&b"},
			`{"type":"CUSTOM","timestamp":1767225600000,"name":"x","value":"a&b"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := string(AppendEvent(nil, ts, tc.ev))
			if got != tc.want {
				t.Fatalf("AppendEvent\n got: %s\nwant: %s", got, tc.want)
			}
			if !json.Valid([]byte(got)) || strings.ContainsAny(got, "\r\n") {
				t.Fatalf("not one line of valid JSON: %q", got)
			}
			m, err := MarshalEvent(ts, tc.ev)
			if err != nil || string(m) != tc.want {
				t.Fatalf("MarshalEvent = %s, %v", m, err)
			}
		})
	}
}

// encoding/json leaves U+2028/U+2029 and invalid UTF-8 raw inside a
// RawJSON value; the encoder must still escape or replace them.
func TestRawJSONLineSeparatorEscaped(t *testing.T) {
	got := AppendEvent(nil, 1, &Custom{Name: "x", Value: RawJSON("\"a\u2028b\u2029c\xffd\"")})
	want := `{"type":"CUSTOM","timestamp":1,"name":"x","value":"a\u2028b\u2029c\ufffdd"}`
	if string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestAppendEventKeepsPrefix(t *testing.T) {
	got := AppendEvent([]byte("data: "), 7, &TextMessageEnd{MessageID: "m"})
	if want := `data: {"type":"TEXT_MESSAGE_END","timestamp":7,"messageId":"m"}`; string(got) != want {
		t.Fatalf("got %s", got)
	}
}

func TestEncodeEventErrors(t *testing.T) {
	cases := []struct {
		name string
		ev   Event
	}{
		{"nil event", nil},
		{"typed nil", (*TextMessageContent)(nil)},
		{"typed nil run finished", (*RunFinished)(nil)},
		{"interrupt outcome without interrupts", &RunFinished{ThreadID: "t", RunID: "r", Outcome: Outcome{Type: OutcomeInterrupt}}},
		{"unknown outcome", &RunFinished{ThreadID: "t", RunID: "r", Outcome: Outcome{Type: "cancelled"}}},
		{"custom NaN", &Custom{Name: "x", Value: math.NaN()}},
		{"custom channel", &Custom{Name: "x", Value: make(chan int)}},
		{"custom bad raw", &Custom{Name: "x", Value: RawJSON("{")}},
		{"activity bad content", &ActivitySnapshot{MessageID: "a", ActivityType: "x", Content: map[string]any{"f": func() {}}}},
		{"interrupt bad schema", &RunFinished{Outcome: Outcome{Type: OutcomeInterrupt, Interrupts: []Interrupt{{ID: "i", ResponseSchema: map[string]any{"x": math.Inf(1)}}}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("data: ")
			out, err := EncodeEvent(prefix, 1, tc.ev)
			if !errors.Is(err, ErrInvalidEvent) {
				t.Fatalf("err = %v, want ErrInvalidEvent", err)
			}
			if string(out) != "data: " {
				t.Fatalf("dst changed on error: %q", out)
			}
			if got := AppendEvent(prefix, 1, tc.ev); string(got) != "data: " {
				t.Fatalf("AppendEvent changed dst on error: %q", got)
			}
			if _, err := MarshalEvent(1, tc.ev); !errors.Is(err, ErrInvalidEvent) {
				t.Fatalf("MarshalEvent err = %v", err)
			}
		})
	}
}

// FuzzEventStringField checks the wire of a string field end to end: the
// encoder's escaping (internal/jsonstr) must give the bytes encoding/json
// gives with HTML escaping off, and the line must stay one SSE line.
func FuzzEventStringField(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\n", "\u2028", "\xff", "🚀", "\x00<>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := `{"type":"TEXT_MESSAGE_CONTENT","timestamp":1767225600000,"messageId":"m1","delta":` +
			strings.TrimSuffix(buf.String(), "\n") + "}"
		got := string(AppendEvent(nil, ts, &TextMessageContent{MessageID: "m1", Delta: s}))
		if got != want {
			t.Fatalf("AppendEvent(delta %q)\n got: %s\nwant: %s", s, got, want)
		}
		if strings.ContainsAny(got, "\r\n\u2028\u2029") || !utf8.ValidString(got) {
			t.Fatalf("unsafe line %q", got)
		}
	})
}

func BenchmarkAppendTextContent(b *testing.B) {
	ev := &TextMessageContent{MessageID: "msg-0123456789abcdef", Delta: "Hello, world! 12345\n"}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEvent(buf[:0], ts, ev)
	}
}

func BenchmarkAppendToolCallArgs(b *testing.B) {
	ev := &ToolCallArgs{ToolCallID: "toolu_0123456789", Delta: `{"command":"terraform plan -out=tfplan","cwd":"/srv/iac/session-1"}`}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEvent(buf[:0], ts, ev)
	}
}

func BenchmarkAppendRunFinishedInterrupt(b *testing.B) {
	ev := &RunFinished{ThreadID: "thread-1", RunID: "run-1", Outcome: Outcome{Type: OutcomeInterrupt, Interrupts: []Interrupt{{
		ID: "permission-9f2c", Reason: "tool_call", Message: "Run a local shell command Allow once?", ToolCallID: "toolu_1",
		ResponseSchema: map[string]any{"type": "object", "properties": map[string]any{"decision": map[string]any{"type": "string", "enum": []any{"allow_once", "deny"}}}, "required": []any{"decision"}, "additionalProperties": false},
		Metadata:       map[string]any{"schemaVersion": 1, "kind": "permission", "toolName": "bash", "title": "Run a local shell command"},
	}}}, Usage: []TokenUsage{{Provider: "dashscope", Model: "qwen-max", InputTokens: 100, OutputTokens: 20, TotalTokens: 120}}}
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEvent(buf[:0], ts, ev)
	}
}
