package mapper

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

func TestNormalTurn(t *testing.T) {
	m := newTestMapper(Config{})
	var out []agui.Event
	frames := []string{
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"thinking":{"type":"raw_thinking","text":"plan"},"iacCodeSessionId":"S"}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"thinking":{"type":"summary","text":"ignored"}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","message":` + agentText("task-1-message", "Here is ") + `}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"task-1-message","parts":[{"text":"the "},{"text":"plan"}]}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"u1","role":"ROLE_USER","parts":[{"text":"user echo"}]}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"tool":{"status":"started","toolUseId":"toolu_1","name":"bash"}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"tool":{"status":"input_delta","toolUseId":"toolu_1","partialJsonLength":57}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"tool":{"status":"input_complete","toolUseId":"toolu_1","name":"bash","inputSummary":{"tool_name":"bash","fields":{"command":"<string>"}}}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"tool":{"status":"started","toolUseId":"toolu_2","name":"write"}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"tool":{"status":"input_complete","toolUseId":"toolu_2","name":"write","toolInput":{"z":1.0,"path":"/tmp/é","html":"<b>&</b>"}}}}}}`,
		`{"artifactUpdate":{"taskId":"task-1","contextId":"ctx-1","artifact":{"artifactId":"a1","name":"template.yaml","metadata":{"byteSize":812.0}},"lastChunk":true}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"tool":{"status":"completed","toolUseId":"toolu_1","name":"bash","result":{"stdout":"/srv\n","code":0.0}}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"tool":{"status":"failed","toolUseId":"toolu_1","name":"bash","result":"again"}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"tool":{"status":"failed","toolUseId":"toolu_2","name":"write","result":"denied"}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"usage":{"provider":"dashscope","model":"qwen","inputTokens":10.0,"outputTokens":5.0,"totalTokens":15.0}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"usage":{"provider":"dashscope","model":"qwen","inputTokens":1.0,"outputTokens":2.0,"totalTokens":3.0,"cachedInputTokens":4.0}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"usage":{"inputTokens":7.0,"outputTokens":1.5,"totalTokens":8.0}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","message":` + agentText("task-1-2", "Here is the plan") + `},"metadata":{"iac_code":{"assistantFinal":{"complete":true}}}}}`,
		`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_INPUT_REQUIRED"},"metadata":{"iac_code":{"iacCodeSessionId":"S"}}}}`,
	}
	for _, f := range frames {
		out = m.Map(out, a2aEvent(t, f))
	}
	out = m.CloseAll(out)
	expectEvents(t, out,
		`{"type":"REASONING_START","messageId":"reasoning-run-1"}`,
		`{"type":"REASONING_MESSAGE_START","messageId":"reasoning-run-1","role":"reasoning"}`,
		`{"type":"REASONING_MESSAGE_CONTENT","messageId":"reasoning-run-1","delta":"plan"}`,
		`{"type":"REASONING_MESSAGE_END","messageId":"reasoning-run-1"}`,
		`{"type":"REASONING_END","messageId":"reasoning-run-1"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"task-1-message","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"task-1-message","delta":"Here is "}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"task-1-message","delta":"the plan"}`,
		`{"type":"TOOL_CALL_START","toolCallId":"toolu_1","toolCallName":"bash","parentMessageId":"task-1-message"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"toolu_1","delta":"{\"summary\":{\"fields\":{\"command\":\"<string>\"},\"tool_name\":\"bash\"}}"}`,
		`{"type":"TOOL_CALL_END","toolCallId":"toolu_1"}`,
		`{"type":"TOOL_CALL_START","toolCallId":"toolu_2","toolCallName":"write","parentMessageId":"task-1-message"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"toolu_2","delta":"{\"html\":\"<b>&</b>\",\"path\":\"/tmp/é\",\"z\":1}"}`,
		`{"type":"TOOL_CALL_END","toolCallId":"toolu_2"}`,
		`{"type":"CUSTOM","name":"iac-code.artifact.v1","value":{"artifactId":"a1","metadata":{"byteSize":812},"name":"template.yaml","schemaVersion":1}}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"tool-result-toolu_1","toolCallId":"toolu_1","content":"{\"code\":0,\"stdout\":\"/srv\\n\"}","role":"tool"}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"tool-result-toolu_2","toolCallId":"toolu_2","content":"denied","role":"tool"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"task-1-message"}`,
	)
	if err := verify(out); err != nil {
		t.Fatal(err)
	}
	u, _ := json.Marshal(m.Usage())
	if want := `[{"provider":"dashscope","model":"qwen","inputTokens":11,"outputTokens":7,"totalTokens":18,"cachedInputTokens":4},{"inputTokens":7,"outputTokens":0,"totalTokens":8,"cachedInputTokens":0}]`; string(u) != want {
		t.Fatalf("usage %s, want %s", u, want)
	}
	if !m.EmittedText() {
		t.Fatal("EmittedText false after text")
	}
}

func TestUsageNilWhenNone(t *testing.T) {
	m := newTestMapper(Config{})
	m.Map(nil, status(t, "WORKING", agentText("m1", "hi"), ""))
	if u := m.Usage(); u != nil {
		t.Fatalf("Usage() = %v, want nil", u)
	}
}

func TestAssistantFinalKeptWhenNothingStreamed(t *testing.T) {
	m := newTestMapper(Config{})
	out := m.Map(nil, status(t, "WORKING", agentText("t-2", "Full answer"), `{"assistantFinal":{"complete":true}}`))
	expectEvents(t, out,
		`{"type":"TEXT_MESSAGE_START","messageId":"t-2","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"t-2","delta":"Full answer"}`)
}

func TestHistoryFallback(t *testing.T) {
	task := `{"task":{"id":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_INPUT_REQUIRED"},"history":[` +
		`{"messageId":"u1","role":"ROLE_USER","parts":[{"text":"hi"}]},` +
		`{"messageId":"a1","role":"ROLE_AGENT","parts":[{"text":"Hel"}]},` +
		`{"messageId":"","role":"agent","parts":[{"text":"lo"}]}]}}`
	m := newTestMapper(Config{})
	expectEvents(t, m.Map(nil, a2aEvent(t, task)),
		`{"type":"TEXT_MESSAGE_START","messageId":"a1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"Hello"}`)

	// A trailing user message: the previous turn's answer is not replayed.
	initial := `{"task":{"id":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_SUBMITTED"},"history":[` +
		`{"messageId":"a0","role":"ROLE_AGENT","parts":[{"text":"old"}]},` +
		`{"messageId":"u2","role":"ROLE_USER","parts":[{"text":"next"}]}]}}`
	if out := newTestMapper(Config{}).Map(nil, a2aEvent(t, initial)); len(out) != 0 {
		t.Fatalf("trailing user message: got %s", render(t, out))
	}

	// Once text was emitted in this run the history is not used.
	m = newTestMapper(Config{})
	m.Map(nil, status(t, "WORKING", agentText("m1", "streamed"), ""))
	if out := m.Map(nil, a2aEvent(t, task)); len(out) != 0 {
		t.Fatalf("history after text: got %s", render(t, out))
	}
}

func TestMessageIDChangeClosesPrevious(t *testing.T) {
	m := newTestMapper(Config{})
	var out []agui.Event
	out = m.Map(out, status(t, "WORKING", agentText("m1", "one"), ""))
	out = m.Map(out, status(t, "WORKING", agentText("m2", "two"), ""))
	out = m.Map(out, status(t, "WORKING", `{"parts":[{"text":" more"}]}`, "")) // no id: current message
	out = m.CloseAll(out)
	out = m.Map(out, status(t, "WORKING", `{"parts":[{"text":"new"}]}`, "")) // no id, none open
	out = m.CloseAll(out)
	expectEvents(t, out,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"one"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m2","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"two"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":" more"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m2"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"assistant-00000000000000000000000000000001","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"assistant-00000000000000000000000000000001","delta":"new"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"assistant-00000000000000000000000000000001"}`)
}

func TestReasoningUsesCurrentMessageAndIsClosedByText(t *testing.T) {
	m := newTestMapper(Config{})
	var out []agui.Event
	out = m.Map(out, status(t, "WORKING", agentText("m1", "a"), ""))
	out = m.Map(out, status(t, "WORKING", "", `{"thinking":{"type":"raw_thinking","text":"x"}}`))
	out = m.Map(out, status(t, "WORKING", "", `{"thinking":{"type":"raw_thinking","text":"y"}}`))
	out = m.Map(out, status(t, "WORKING", agentText("m1", "b"), ""))
	expectEvents(t, out,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`,
		`{"type":"REASONING_START","messageId":"reasoning-m1"}`,
		`{"type":"REASONING_MESSAGE_START","messageId":"reasoning-m1","role":"reasoning"}`,
		`{"type":"REASONING_MESSAGE_CONTENT","messageId":"reasoning-m1","delta":"x"}`,
		`{"type":"REASONING_MESSAGE_CONTENT","messageId":"reasoning-m1","delta":"y"}`,
		`{"type":"REASONING_MESSAGE_END","messageId":"reasoning-m1"}`,
		`{"type":"REASONING_END","messageId":"reasoning-m1"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"b"}`)
}

func TestToolProgressAndMissingIDs(t *testing.T) {
	m := newTestMapper(Config{})
	var out []agui.Event
	out = m.Map(out, status(t, "WORKING", "", `{"tool":{"status":"progress","toolUseId":"toolu_9","name":"mcp__x","mcp":{"progress":1.0,"total":4.0}}}`))
	out = m.Map(out, status(t, "WORKING", "", `{"tool":{"status":"input_complete"}}`))
	expectEvents(t, out,
		`{"type":"CUSTOM","name":"iac-code.tool-progress.v1","value":{"mcp":{"progress":1,"total":4},"name":"mcp__x","schemaVersion":1,"status":"progress","toolUseId":"toolu_9"}}`,
		`{"type":"TOOL_CALL_START","toolCallId":"tool-00000000000000000000000000000001","toolCallName":"tool"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"tool-00000000000000000000000000000001","delta":"{\"summary\":null}"}`,
		`{"type":"TOOL_CALL_END","toolCallId":"tool-00000000000000000000000000000001"}`)
}

func TestToolResultOncePerID(t *testing.T) {
	m := newTestMapper(Config{})
	out := m.ToolResult(nil, "toolu_q", "Option A")
	out = m.ToolResult(out, "toolu_q", "Option A")
	expectEvents(t, out, `{"type":"TOOL_CALL_RESULT","messageId":"tool-result-toolu_q","toolCallId":"toolu_q","content":"Option A","role":"tool"}`)
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestResumePrefixDedup(t *testing.T) {
	m := newTestMapper(Config{TextDigests: []string{digest("before interrupt")}})
	var out []agui.Event
	out = m.Map(out, status(t, "WORKING", agentText("m1", "before interruptafter resume"), ""))
	out = m.Map(out, status(t, "WORKING", agentText("m1", "before interrupt"), "")) // only the first text is checked
	expectEvents(t, out,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		// Ours: the continuation is a new paragraph of the message the
		// client shows, not glued to its last word (§4.7).
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"\n\nafter resume"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"before interrupt"}`)
	m.RecordTextSnapshot()
	want := []string{digest("before interrupt"), digest("before interruptafter resumebefore interrupt")}
	if want[0] > want[1] {
		want[0], want[1] = want[1], want[0]
	}
	if got := m.TextDigests(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("TextDigests = %v, want %v", got, want)
	}

	// Whole text already emitted: nothing is emitted, multi-byte boundaries respected.
	m = newTestMapper(Config{TextDigests: []string{digest("héllo")}})
	if out := m.Map(nil, status(t, "WORKING", agentText("m1", "héllo"), "")); len(out) != 0 {
		t.Fatalf("replayed text emitted: %s", render(t, out))
	}
	expectEvents(t, m.Map(nil, status(t, "WORKING", agentText("m1", "!"), "")),
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"!"}`)
}

func TestTextDigestsRecordedAtToolStartAndClose(t *testing.T) {
	m := newTestMapper(Config{})
	m.Map(nil, status(t, "WORKING", agentText("m1", "abc"), ""))
	m.Map(nil, status(t, "WORKING", "", `{"tool":{"status":"started","toolUseId":"t1","name":"bash"}}`))
	if got := m.TextDigests(); len(got) != 1 || got[0] != digest("abc") {
		t.Fatalf("after tool start: %v", got)
	}
	m.Map(nil, status(t, "WORKING", agentText("m1", "def"), ""))
	m.CloseAll(nil)
	// The digest covers the message's whole text so far, not only the text
	// since the tool: a replay repeats the message from its start.
	got := m.TextDigests()
	if len(got) != 2 || (got[0] != digest("abcdef") && got[1] != digest("abcdef")) {
		t.Fatalf("after close: %v, want digest of %q included", got, "abcdef")
	}

	// A later run replays "abcdefXYZ" as one text: only "XYZ" is new.
	m = newTestMapper(Config{TextDigests: got})
	expectEvents(t, m.Map(nil, status(t, "WORKING", agentText("m1", "abcdefXYZ"), "")),
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"\n\nXYZ"}`)
}

// TestSegmentsSeparated: text A2A sends glued to the text before a tool
// call or an interrupt starts a new paragraph (ours, protocol.md §4.7);
// text that is already apart, or continues with punctuation, is left.
func TestSegmentsSeparated(t *testing.T) {
	tool := func(id string) string { return `{"tool":{"status":"started","toolUseId":"` + id + `","name":"bash"}}` }
	m := newTestMapper(Config{})
	out := m.Map(nil, status(t, "WORKING", agentText("m1", "I need to inspect the workspace first."), ""))
	out = m.Map(out, status(t, "WORKING", agentText("m1", " More."), ""))
	out = m.Map(out, status(t, "WORKING", "", tool("t1")))
	out = m.Map(out, status(t, "WORKING", agentText("m1", "The workspace is /w."), ""))
	out = m.Map(out, status(t, "WORKING", "", tool("t2")))
	out = m.Map(out, status(t, "WORKING", agentText("m1", "\nDone"), ""))
	out = m.Map(out, status(t, "WORKING", "", tool("t3")))
	out = m.Map(out, status(t, "WORKING", agentText("m1", "!"), ""))
	var deltas []string
	for _, ev := range out {
		if c, ok := ev.(*agui.TextMessageContent); ok {
			deltas = append(deltas, c.Delta)
		}
	}
	want := []string{"I need to inspect the workspace first.", " More.", "\n\nThe workspace is /w.", "\nDone", "!"}
	if strings.Join(deltas, "|") != strings.Join(want, "|") {
		t.Fatalf("deltas %q, want %q", deltas, want)
	}
	// The digests cover A2A's text, without the separators.
	m.CloseAll(nil)
	if !slices.Contains(m.TextDigests(), digest("I need to inspect the workspace first. More.The workspace is /w.\nDone!")) {
		t.Fatalf("digests %v lack the whole text's", m.TextDigests())
	}

	// A continuation (a resume) whose agent sends only the new text: it
	// starts a paragraph of the message shown before the interrupt.
	m = newTestMapper(Config{TextDigests: []string{digest("I need to inspect the workspace first.")}})
	expectEvents(t, m.Map(nil, status(t, "WORKING", agentText("m1", "The workspace is /w."), "")),
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"\n\nThe workspace is /w."}`)
}

func TestMapTaskSnapshotSkipsTextAndPipeline(t *testing.T) {
	m := newTestMapper(Config{PipelineSequence: 5})
	task := `{"task":{"id":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":` + agentText("m9", "last words") + `},` +
		`"history":[{"messageId":"a1","role":"ROLE_AGENT","parts":[{"text":"older"}]}],` +
		`"metadata":{"iac_code":{"pipeline":{"eventId":"e9","sequence":9.0,"eventType":"text_delta","data":{"text":"pipe"}},` +
		`"tool":{"status":"completed","toolUseId":"toolu_1","result":"ok"},"usage":{"inputTokens":2.0,"outputTokens":1.0,"totalTokens":3.0}}}}}`
	out := m.MapTaskSnapshot(nil, a2aEvent(t, task))
	expectEvents(t, out, `{"type":"TOOL_CALL_RESULT","messageId":"tool-result-toolu_1","toolCallId":"toolu_1","content":"ok","role":"tool"}`)
	if m.PipelineSequence() != 5 || m.EmittedText() || len(m.Usage()) != 1 {
		t.Fatalf("sequence %d emitted %v usage %v", m.PipelineSequence(), m.EmittedText(), m.Usage())
	}
	// The skipped pipeline envelope is still new for live mapping.
	expectEvents(t, m.Map(nil, a2aEvent(t, task))[:1],
		`{"type":"TEXT_MESSAGE_START","messageId":"pipeline-message:pipeline-thread-1:pipeline","role":"assistant"}`)
}

func TestIdentity(t *testing.T) {
	cases := []struct{ iac, want string }{
		{`{"iacCodeSessionId":"S1","pipeline":{"iacCodeSessionId":"S2"}}`, "S1"},
		{`{"pipeline":{"iacCodeSessionId":"S2"},"pipelineBatch":{"events":[{"iacCodeSessionId":"S3"}]}}`, "S2"},
		{`{"pipelineBatch":{"events":[{"eventType":"x"},{"iacCodeSessionId":""},{"iacCodeSessionId":"S3"},{"iacCodeSessionId":"S4"}]}}`, "S3"},
		{`{}`, ""},
	}
	for _, c := range cases {
		task, ctx, sess := Identity(status(t, "WORKING", "", c.iac))
		if task != "task-1" || ctx != "ctx-1" || sess != c.want {
			t.Errorf("%s: got %q %q %q, want session %q", c.iac, task, ctx, sess, c.want)
		}
	}
	task, _, _ := Identity(a2aEvent(t, `{"task":{"id":"task-7","contextId":"c"}}`))
	if task != "task-7" {
		t.Errorf("task id from Task.id: %q", task)
	}
}

func TestJSONText(t *testing.T) {
	in := map[string]any{"b": []any{1.0, 2.5, 1e-7, nil, true}, "a": "<é>&\u2028\"\\\n\x01", "c": map[string]any{"y": 1.0, "x": "中"}}
	want := `{"a":"<é>&` + "\u2028" + `\"\\\n\u0001","b":[1,2.5,1e-07,null,true],"c":{"x":"中","y":1}}`
	if got := jsonText(in); got != want {
		t.Fatalf("jsonText = %s\nwant      %s", got, want)
	}
	if got := jsonText("plain"); got != "plain" {
		t.Fatalf("string result: %q", got)
	}
	if got := jsonText(nil); got != "null" {
		t.Fatalf("nil result: %q", got)
	}
}

func TestNormalTextClosesPreviousAcrossPipelineText(t *testing.T) {
	m := newTestMapper(Config{})
	var out []agui.Event
	out = m.Map(out, status(t, "WORKING", agentText("m1", "a"), ""))
	out = m.Map(out, batch(t, `{"eventId":"1","eventType":"text_delta","data":{"text":"p"}}`))
	out = m.Map(out, status(t, "WORKING", agentText("m2", "b"), ""))
	pm := "pipeline-message:pipeline-thread-1:pipeline"
	expectEvents(t, out,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"`+pm+`","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"`+pm+`","delta":"p"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m2","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"b"}`)
}

// TestCanceledStatusTextSkipped: the executor's "Task canceled." is not
// shown; the run's RUN_ERROR CANCELLED says it (ours, protocol.md §4.7).
func TestCanceledStatusTextSkipped(t *testing.T) {
	m := newTestMapper(Config{})
	out := m.Map(nil, status(t, "WORKING", agentText("m1", "Working on it."), ""))
	out = m.Map(out, status(t, "CANCELED", agentText("T-5", "Task canceled."), ""))
	expectEvents(t, out,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Working on it."}`)
}
