package agui

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// clientBody is exactly what @ag-ui/client 1.0.0 sends for runAgent on an
// empty thread (agui.md §1.1).
const clientBody = `{"threadId":"t1","runId":"r1","protocolVersion":"1.0","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{}}`

// withField returns clientBody with key set to the raw JSON value, or
// removed when value is "".
func withField(t *testing.T, key, value string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(clientBody), &m); err != nil {
		t.Fatal(err)
	}
	if value == "" {
		delete(m, key)
	} else {
		m[key] = json.RawMessage(value)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeClientBody(t *testing.T) {
	in, err := DecodeRunAgentInput([]byte(clientBody))
	if err != nil {
		t.Fatal(err)
	}
	want := &RunAgentInput{
		ThreadID: "t1", RunID: "r1", ProtocolVersion: "1.0",
		State: json.RawMessage(`{}`), Messages: []Message{},
		Tools: []json.RawMessage{}, Context: []json.RawMessage{},
		ForwardedProps: json.RawMessage(`{}`),
	}
	if !reflect.DeepEqual(in, want) {
		t.Fatalf("got %+v\nwant %+v", in, want)
	}
}

func TestDecodeFullBody(t *testing.T) {
	body := `{"threadId":"","runId":"","parentRunId":"r0","state":null,"extra":1,
	 "messages":[
	  {"id":"d","role":"developer","content":"be brief","name":"n","x":true},
	  {"id":"s","role":"system","content":"sys","encryptedValue":"e","metadata":{"k":1}},
	  {"id":"a","role":"assistant"},
	  {"id":"a2","role":"assistant","content":"calling","toolCalls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"pwd\"}"},"extra":1}]},
	  {"id":"tl","role":"tool","content":"ok","toolCallId":"c1","error":"none"},
	  {"id":"tl2","role":"tool","content":[{"type":"text","text":"ok"}],"toolCallId":"c1"},
	  {"id":"ac","role":"activity","activityType":"iac-code.pipeline.v1","content":{"a":1}},
	  {"id":"re","role":"reasoning","content":"thought","subagentRunId":"sa"},
	  {"id":"u","role":"user","content":[{"type":"text","text":"hi"},{"type":"binary","mimeType":"application/pdf"},{"type":"image","source":{"type":"url","value":"u"}}]},
	  {"id":"u2","role":"user","content":"plain"}],
	 "tools":[{"name":"t","description":"d","parameters":{"type":"object"},"metadata":{}}],
	 "context":[{"description":"d","value":"v","extra":1}],
	 "forwardedProps":{"iacCode":{"cwd":"/srv"}},
	 "resume":[{"interruptId":"i1","status":"resolved","payload":{"decision":"deny"},"metadata":{"m":"x"}},
	           {"interruptId":"i2","status":"cancelled","payload":null}]}`
	in, err := DecodeRunAgentInput([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if in.ThreadID != "" || in.RunID != "" || in.ParentRunID != "r0" || string(in.State) != "null" {
		t.Fatalf("ids/state: %+v", in)
	}
	roles := make([]string, len(in.Messages))
	for i, m := range in.Messages {
		roles[i] = m.Role
	}
	if got := strings.Join(roles, ","); got != "developer,system,assistant,assistant,tool,tool,activity,reasoning,user,user" {
		t.Fatalf("roles %s", got)
	}
	if in.Messages[2].Content != nil || string(in.Messages[9].Content) != `"plain"` || string(in.Messages[6].Content) != `{"a":1}` {
		t.Fatalf("content: %q %q %q", in.Messages[2].Content, in.Messages[9].Content, in.Messages[6].Content)
	}
	if len(in.Tools) != 1 || len(in.Context) != 1 || string(in.ForwardedProps) != `{"iacCode":{"cwd":"/srv"}}` {
		t.Fatalf("tools/context/forwardedProps: %+v", in)
	}
	wantResume := []ResumeEntry{
		{InterruptID: "i1", Status: ResumeResolved, Payload: json.RawMessage(`{"decision":"deny"}`), Metadata: map[string]any{"m": "x"}},
		{InterruptID: "i2", Status: ResumeCancelled},
	}
	if !in.HasResume || !reflect.DeepEqual(in.Resume, wantResume) {
		t.Fatalf("resume %v %+v", in.HasResume, in.Resume)
	}
}

func TestDecodeResumePresence(t *testing.T) {
	cases := []struct {
		value     string
		hasResume bool
		n         int
	}{
		{"", false, 0},
		{"null", false, 0},
		{"[]", true, 0},
		{`[{"interruptId":"i","status":"resolved"}]`, true, 1},
	}
	for _, tc := range cases {
		in, err := DecodeRunAgentInput(withField(t, "resume", tc.value))
		if err != nil {
			t.Fatalf("resume %q: %v", tc.value, err)
		}
		if in.HasResume != tc.hasResume || len(in.Resume) != tc.n || (tc.hasResume && in.Resume == nil) {
			t.Fatalf("resume %q: HasResume=%v Resume=%#v", tc.value, in.HasResume, in.Resume)
		}
	}
}

func TestDecodeAcceptsOptionalNullsAndAnyState(t *testing.T) {
	for _, tc := range []struct{ key, value string }{
		{"parentRunId", "null"}, {"protocolVersion", "null"}, {"protocolVersion", `"0.0.40"`},
		{"state", "null"}, {"state", "[1,2]"}, {"state", `"s"`}, {"state", "3"},
		{"forwardedProps", "[]"}, {"forwardedProps", `"x"`}, {"forwardedProps", "false"},
		{"unknownKey", `{"deep":[null]}`},
	} {
		if _, err := DecodeRunAgentInput(withField(t, tc.key, tc.value)); err != nil {
			t.Errorf("%s=%s rejected: %v", tc.key, tc.value, err)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	cases := []struct {
		name, key, value string
	}{
		{"missing threadId", "threadId", ""},
		{"missing runId", "runId", ""},
		{"missing messages", "messages", ""},
		{"missing state", "state", ""},
		{"missing tools", "tools", ""},
		{"missing context", "context", ""},
		{"missing forwardedProps", "forwardedProps", ""},
		{"null forwardedProps", "forwardedProps", "null"},
		{"threadId number", "threadId", "1"},
		{"threadId null", "threadId", "null"},
		{"runId object", "runId", "{}"},
		{"parentRunId number", "parentRunId", "2"},
		{"protocolVersion number", "protocolVersion", "1.0"},
		{"messages object", "messages", "{}"},
		{"messages null", "messages", "null"},
		{"tools object", "tools", "{}"},
		{"tools null", "tools", "null"},
		{"context string", "context", `"c"`},
		{"tool not object", "tools", `["t"]`},
		{"tool without description", "tools", `[{"name":"t"}]`},
		{"tool name number", "tools", `[{"name":1,"description":"d"}]`},
		{"tool metadata array", "tools", `[{"name":"t","description":"d","metadata":[]}]`},
		{"context without value", "context", `[{"description":"d"}]`},
		{"context value object", "context", `[{"description":"d","value":{}}]`},
		{"resume object", "resume", `{}`},
		{"resume entry not object", "resume", `["i"]`},
		{"resume without interruptId", "resume", `[{"status":"resolved"}]`},
		{"resume interruptId number", "resume", `[{"interruptId":1,"status":"resolved"}]`},
		{"resume without status", "resume", `[{"interruptId":"i"}]`},
		{"resume bad status", "resume", `[{"interruptId":"i","status":"approved"}]`},
		{"resume metadata string", "resume", `[{"interruptId":"i","status":"resolved","metadata":"m"}]`},
		{"message not object", "messages", `["hi"]`},
		{"message without id", "messages", `[{"role":"user","content":"x"}]`},
		{"message id number", "messages", `[{"id":1,"role":"user","content":"x"}]`},
		{"message without role", "messages", `[{"id":"m","content":"x"}]`},
		{"unknown role", "messages", `[{"id":"m","role":"human","content":"x"}]`},
		{"user without content", "messages", `[{"id":"m","role":"user"}]`},
		{"user content null", "messages", `[{"id":"m","role":"user","content":null}]`},
		{"user content number", "messages", `[{"id":"m","role":"user","content":5}]`},
		{"user content object", "messages", `[{"id":"m","role":"user","content":{"type":"text"}}]`},
		{"user part not object", "messages", `[{"id":"m","role":"user","content":["hi"]}]`},
		{"user part without type", "messages", `[{"id":"m","role":"user","content":[{"text":"hi"}]}]`},
		{"user part type number", "messages", `[{"id":"m","role":"user","content":[{"type":1}]}]`},
		{"user name number", "messages", `[{"id":"m","role":"user","content":"x","name":1}]`},
		{"metadata array", "messages", `[{"id":"m","role":"user","content":"x","metadata":[]}]`},
		{"subagentRunId number", "messages", `[{"id":"m","role":"user","content":"x","subagentRunId":1}]`},
		{"system without content", "messages", `[{"id":"m","role":"system"}]`},
		{"developer content array", "messages", `[{"id":"m","role":"developer","content":[]}]`},
		{"reasoning without content", "messages", `[{"id":"m","role":"reasoning"}]`},
		{"assistant content number", "messages", `[{"id":"m","role":"assistant","content":1}]`},
		{"assistant toolCalls object", "messages", `[{"id":"m","role":"assistant","toolCalls":{}}]`},
		{"toolCall wrong type", "messages", `[{"id":"m","role":"assistant","toolCalls":[{"id":"c","type":"fn","function":{"name":"n","arguments":"{}"}}]}]`},
		{"toolCall without function", "messages", `[{"id":"m","role":"assistant","toolCalls":[{"id":"c","type":"function"}]}]`},
		{"toolCall arguments object", "messages", `[{"id":"m","role":"assistant","toolCalls":[{"id":"c","type":"function","function":{"name":"n","arguments":{}}}]}]`},
		{"tool without toolCallId", "messages", `[{"id":"m","role":"tool","content":"x"}]`},
		{"tool without content", "messages", `[{"id":"m","role":"tool","toolCallId":"c"}]`},
		{"tool error number", "messages", `[{"id":"m","role":"tool","content":"x","toolCallId":"c","error":1}]`},
		{"activity without activityType", "messages", `[{"id":"m","role":"activity","content":{}}]`},
		{"activity content string", "messages", `[{"id":"m","role":"activity","activityType":"a","content":"x"}]`},
		{"activity without content", "messages", `[{"id":"m","role":"activity","activityType":"a"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := DecodeRunAgentInput(withField(t, tc.key, tc.value))
			if !errors.Is(err, ErrInvalidEnvelope) || in != nil {
				t.Fatalf("got %+v, %v; want ErrInvalidEnvelope", in, err)
			}
		})
	}
}

func TestDecodeRejectsNonObjects(t *testing.T) {
	for _, body := range []string{"", "null", "[]", `"s"`, "1", "{", `{"threadId":"t1"} x`, "\xff"} {
		if _, err := DecodeRunAgentInput([]byte(body)); !errors.Is(err, ErrInvalidEnvelope) {
			t.Errorf("%q: err = %v", body, err)
		}
	}
}

func TestDecodeErrorNamesPathNotValue(t *testing.T) {
	body := withField(t, "messages", `[{"id":"m","role":"user","content":"x"},{"id":"m2","role":"user","content":[{"type":"text"},{"secret":"sk-123"}]}]`)
	_, err := DecodeRunAgentInput(body)
	want := "agui: invalid AG-UI RunAgentInput envelope: messages[1].content[1].type: is required"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func FuzzDecodeRunAgentInput(f *testing.F) {
	f.Add([]byte(clientBody))
	f.Add([]byte(`{"threadId":"t","runId":"r","state":1,"messages":[{"id":"u","role":"user","content":[{"type":"image"}]}],"tools":[],"context":[],"forwardedProps":{},"resume":[{"interruptId":"i","status":"cancelled","payload":null}]}`))
	f.Add([]byte(`{"messages":[{"role":"tool"}]}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := DecodeRunAgentInput(body)
		if (in == nil) == (err == nil) {
			t.Fatalf("exactly one of input and error must be set: %v, %v", in, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidEnvelope) {
			t.Fatalf("error %v does not wrap ErrInvalidEnvelope", err)
		}
		if in != nil && in.HasResume != (in.Resume != nil) {
			t.Fatalf("HasResume %v with Resume %#v", in.HasResume, in.Resume)
		}
	})
}
