package server_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestNormalRun: the normal turn of the embedded agent maps to the event
// sequence of protocol.md §4.4 with the A2A metadata of §10.4.
func TestNormalRun(t *testing.T) {
	e := newEnv(t, envOptions{})
	r := post(t, e.URL, e.body("thread-normal", "run-1", "Create a VPC template", map[string]any{
		"llmApiKey": "sk-secret-value", "llmHeaders": map[string]any{"X-Trace": "header-secret"}, "model": "qwen-max",
	}), nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/event-stream" || r.Header.Get("Cache-Control") != "no-cache" || r.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("status %d headers %v", r.Status, r.Header)
	}
	if strings.Contains(r.Raw, "\r") {
		t.Fatal("CR in SSE framing")
	}
	got := types(r.Events)
	want := []string{"RUN_STARTED", "CUSTOM", "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
		"REASONING_MESSAGE_END", "REASONING_END", "TEXT_MESSAGE_START"}
	if !reflect.DeepEqual(got[:len(want)], want) {
		t.Fatalf("prefix %v", got)
	}
	fin := last(r.Events)
	if fin["type"] != "RUN_FINISHED" || fin["threadId"] != "thread-normal" || fin["runId"] != "run-1" {
		t.Fatalf("terminal %v", fin)
	}
	if o, _ := json.Marshal(fin["outcome"]); string(o) != `{"type":"success"}` {
		t.Fatalf("outcome %s", o)
	}
	if u, _ := json.Marshal(fin["usage"]); string(u) != `[{"cachedInputTokens":0,"inputTokens":1200,"outputTokens":350,"totalTokens":1550}]` {
		t.Fatalf("usage %s", u)
	}
	for _, ev := range r.Events {
		if _, ok := ev["timestamp"].(float64); !ok {
			t.Fatalf("event without integer timestamp: %v", ev)
		}
	}
	assertBalanced(t, r.Events)
	session := r.Events[1]
	v := session["value"].(map[string]any)
	if session["name"] != "iac-code.session.v1" || v["threadId"] != "thread-normal" || v["aguiRunId"] != "run-1" || v["rosInvocationId"] != "invocation-1" || !strings.HasPrefix(v["contextId"].(string), "agui-") {
		t.Fatalf("session %v", session)
	}
	// The request reached A2A as message metadata only.
	calls := e.Agent.Calls()
	if len(calls) == 0 || calls[0].Method != "SendStreamingMessage" {
		t.Fatalf("calls %+v", calls)
	}
	wantKeys := []string{"cleanupOnly", "cwd", "iac_code_api_key", "iac_code_model", "llm_headers", "preferredLanguage", "rosInvocationId"}
	if !reflect.DeepEqual(calls[0].MetadataKeys, wantKeys) {
		t.Fatalf("metadata keys %v, want %v", calls[0].MetadataKeys, wantKeys)
	}
	if got := e.Agent.ContextHeaders(v["contextId"].(string)); got["X-Trace"] != "header-secret" {
		t.Fatalf("llm_headers binding %v", got)
	}
	// Nothing secret or conversational reached the state directory.
	assertStateClean(t, e.StateDir, "sk-secret-value", "header-secret", "Create a VPC template", "ROSTemplateFormatVersion")
}

// TestEmptyLLMHeadersClear: `{}` is forwarded and clears the binding; an
// omitted field inherits it (protocol reference, llmHeaders).
func TestEmptyLLMHeadersClear(t *testing.T) {
	e := newEnv(t, envOptions{})
	r := post(t, e.URL, e.body("thread-h", "run-1", "Create a VPC template", map[string]any{"llmHeaders": map[string]any{"X-A": "1"}}), nil)
	ctxID := r.Events[1]["value"].(map[string]any)["contextId"].(string)
	post(t, e.URL, e.body("thread-h", "run-2", "Create a VPC template", nil), nil)
	if got := e.Agent.ContextHeaders(ctxID); got["X-A"] != "1" {
		t.Fatalf("omitted llmHeaders must inherit: %v", got)
	}
	post(t, e.URL, e.body("thread-h", "run-3", "Create a VPC template", map[string]any{"llm_headers": map[string]any{}}), nil)
	if got := e.Agent.ContextHeaders(ctxID); len(got) != 0 {
		t.Fatalf("{} must clear: %v", got)
	}
}

func TestRunErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	cases := []struct {
		name, text string
		messages   []any
		code, msg  string
	}{
		{"failure", "Please fail", nil, "A2A_EXECUTION_FAILED", "The A2A execution failed."},
		{"json-rpc error frame", "stream error", nil, "A2A_UNAVAILABLE", "The local A2A execution service is unavailable."},
		{"no user message", "", []any{map[string]any{"id": "a1", "role": "assistant", "content": "hello"}}, "INVALID_INPUT", "A new run requires a user message."},
		{"remote image", "", []any{map[string]any{"id": "u1", "role": "user", "content": []any{
			map[string]any{"type": "image", "source": map[string]any{"type": "url", "value": "https://example.com/a.png"}}}}},
			"INVALID_INPUT", "Remote media URLs are not supported."},
		{"audio", "", []any{map[string]any{"id": "u1", "role": "user", "content": []any{
			map[string]any{"type": "audio", "source": map[string]any{"type": "data", "value": "AAAA", "mimeType": "audio/wav"}}}}},
			"INVALID_INPUT", "Only text and inline data images are supported."},
		{"bad media type", "", []any{map[string]any{"id": "u1", "role": "user", "content": []any{
			map[string]any{"type": "image", "source": map[string]any{"type": "data", "value": "AAAA", "mimeType": "image/bmp"}}}}},
			"INVALID_INPUT", "The image media type is not supported."},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := e.body("thread-err-"+c.name, "run-1", c.text, nil)
			if c.messages != nil {
				b["messages"] = c.messages
			}
			r := post(t, e.URL, b, map[string]string{"Accept-Language": "en"})
			fin := last(r.Events)
			if r.Status != 200 || r.Events[0]["type"] != "RUN_STARTED" || fin["type"] != "RUN_ERROR" || fin["code"] != c.code || fin["message"] != c.msg {
				t.Fatalf("%d: %v / %v", i, types(r.Events), fin)
			}
			if _, ok := fin["threadId"]; ok {
				t.Fatal("RUN_ERROR must not carry threadId (AG-UI 1.0)")
			}
			if _, ok := fin["runId"]; ok {
				t.Fatal("RUN_ERROR must not carry runId (AG-UI 1.0)")
			}
		})
	}
}

// TestHeartbeat: 15 s of silence (shortened here) gives the SSE comment.
func TestHeartbeat(t *testing.T) {
	e := newEnv(t, envOptions{heartbeat: 100 * time.Millisecond})
	s := openStream(t, e.URL, e.body("thread-hb", "run-1", "stall", nil))
	session := s.waitFor(t, "CUSTOM")
	deadline := time.Now().Add(3 * time.Second)
	buf := make([]byte, 4096)
	var raw strings.Builder
	for time.Now().Before(deadline) && !strings.Contains(raw.String(), ": heartbeat\n\n") {
		n, err := s.res.Body.Read(buf)
		raw.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if !strings.Contains(raw.String(), ": heartbeat\n\n") {
		t.Fatalf("no heartbeat comment: %q", raw.String())
	}
	v := session["value"].(map[string]any)
	c := postCancel(t, e, v["executionId"].(string), map[string]any{"threadId": "thread-hb", "rosInvocationId": "invocation-1"})
	if c.Status != 200 {
		t.Fatalf("cancel %d %s", c.Status, c.Body)
	}
}

// assertBalanced mirrors the client's verifier (agui.md §4 step 4).
func assertBalanced(t *testing.T, evs []map[string]any) {
	t.Helper()
	open := map[string]bool{}
	key := func(e map[string]any, kind string) string {
		for _, k := range []string{"messageId", "toolCallId", "stepName"} {
			if v, ok := e[k].(string); ok {
				return kind + ":" + v
			}
		}
		return kind
	}
	pairs := map[string][2]string{
		"TEXT_MESSAGE_START": {"text", "+"}, "TEXT_MESSAGE_END": {"text", "-"},
		"REASONING_START": {"rspan", "+"}, "REASONING_END": {"rspan", "-"},
		"REASONING_MESSAGE_START": {"rmsg", "+"}, "REASONING_MESSAGE_END": {"rmsg", "-"},
		"TOOL_CALL_START": {"tool", "+"}, "TOOL_CALL_END": {"tool", "-"},
		"STEP_STARTED": {"step", "+"}, "STEP_FINISHED": {"step", "-"},
	}
	for i, e := range evs {
		typ := e["type"].(string)
		if p, ok := pairs[typ]; ok {
			k := key(e, p[0])
			if p[1] == "+" {
				if open[k] {
					t.Fatalf("event %d: %s reopens %s", i, typ, k)
				}
				open[k] = true
			} else {
				if !open[k] {
					t.Fatalf("event %d: %s closes unopened %s", i, typ, k)
				}
				delete(open, k)
			}
		}
		if typ == "RUN_FINISHED" && len(open) > 0 {
			t.Fatalf("RUN_FINISHED with open spans %v", open)
		}
	}
}

// TestImageForwarded: an inline image reaches A2A as the data part of
// protocol.md §10.5, with the AG-UI message id as the A2A message id.
func TestImageForwarded(t *testing.T) {
	e := newEnv(t, envOptions{})
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	b := e.body("thread-img", "run-1", "", nil)
	b["messages"] = []any{map[string]any{"id": "user-msg-1", "role": "user", "content": []any{
		map[string]any{"type": "text", "text": "Build this architecture"},
		map[string]any{"type": "image", "source": map[string]any{"type": "data", "value": png, "mimeType": "IMAGE/PNG"}, "metadata": map[string]any{"filename": "diagram.png"}},
	}}}
	r := post(t, e.URL, b, nil)
	if fin := last(r.Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("run: %v", fin)
	}
	c := e.Agent.Calls()[0]
	parts, _ := json.Marshal(c.Parts)
	want := `[{"text":"Build this architecture"},{"data":{"bytes":"` + png + `","filename":"diagram.png"},"mediaType":"image/png"}]`
	if c.MessageID != "user-msg-1" || !jsonEqual(t, string(parts), want) {
		t.Fatalf("message %s parts %s\nwant %s", c.MessageID, parts, want)
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
