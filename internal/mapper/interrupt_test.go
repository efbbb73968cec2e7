package mapper

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// canonical re-encodes JSON with sorted keys so documents compare as JSON.
func canonical(t testing.TB, b []byte) string {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("bad JSON %s: %v", b, err)
	}
	return string(appendJSON(nil, v))
}

func TestPermissionInterruptMatchesSpecExample(t *testing.T) {
	// The A2A permission envelope of upstream.md §4.1, as it arrives.
	frame := `{"statusUpdate":{"taskId":"task-1","contextId":"agui-4f1c…","status":{"state":"TASK_STATE_INPUT_REQUIRED"},"metadata":{"iac_code":{` +
		`"input":{"schemaVersion":1,"kind":"permission","requestTaskId":"task-1","contextId":"agui-4f1c…","inputId":"permission-9f2c…","toolUseId":"toolu_1","toolName":"bash",` +
		`"title":"Run a local shell command","purpose":"Execute a local command needed for the requested infrastructure task.",` +
		`"effect":"local_execution","target":"the current local workspace; command: pwd","isReadOnly":false,` +
		`"prompt":"Run a local shell command Allow once?","safeSummary":"bash: {\"command\":\"pwd\"}",` +
		`"options":[{"id":"allow_once","label":"Allow once"},{"id":"deny","label":"Deny"}],"language":"en","required":true},` +
		`"permission":{"autoApproved":false,"pending":true,"toolName":"bash","toolUseId":"toolu_1"},"iacCodeSessionId":"S"}}}}`
	m := newTestMapper(Config{})
	ins := m.RequiredInputs(a2aEvent(t, frame))
	if len(ins) != 1 || ins[0].ID != "permission-9f2c…" || ins[0].Sideband {
		t.Fatalf("inputs %+v", ins)
	}
	if ForeignInput(ins[0], "task-1", "agui-4f1c…") {
		t.Fatal("own input reported foreign")
	}
	fin := agui.RunFinished{ThreadID: "thread-1", RunID: "run-1", Outcome: agui.Outcome{Type: agui.OutcomeInterrupt, Interrupts: []agui.Interrupt{BuildInterrupt(ins[0].Projection)}}}
	body, err := json.Marshal(fin)
	if err != nil {
		t.Fatal(err)
	}
	got := `{"type":"RUN_FINISHED","timestamp":1767225600000,` + string(body[1:])
	// protocol.md §5.3, verbatim (its message is ours, §5.2: the spec's
	// example passes A2A's prompt through).
	want := `{"type":"RUN_FINISHED","timestamp":1767225600000,"threadId":"thread-1","runId":"run-1",
 "outcome":{"type":"interrupt","interrupts":[{
   "id":"permission-9f2c…",
   "reason":"tool_call",
   "message":"Run a local shell command. Allow once?",
   "toolCallId":"toolu_1",
   "responseSchema":{"type":"object","properties":{"decision":{"type":"string","enum":["allow_once","deny"]}},"required":["decision"],"additionalProperties":false},
   "metadata":{"schemaVersion":1,"kind":"permission","requestTaskId":"task-1","contextId":"agui-4f1c…",
     "inputId":"permission-9f2c…","toolUseId":"toolu_1","toolName":"bash",
     "title":"Run a local shell command","purpose":"Execute a local command needed for the requested infrastructure task.",
     "effect":"local_execution","target":"the current local workspace; command: pwd","isReadOnly":false,
     "prompt":"Run a local shell command Allow once?","safeSummary":"bash: {\"command\":\"pwd\"}",
     "options":[{"id":"allow_once","label":"Allow once"},{"id":"deny","label":"Deny"}],
     "language":"en","required":true,
     "standardOptions":[{"id":"allow_once","title":"Allow once"},{"id":"deny","title":"Deny"}]}}]}}`
	if g, w := canonical(t, []byte(got)), canonical(t, []byte(want)); g != w {
		t.Fatalf("interrupt differs from §5.3\ngot  %s\nwant %s", g, w)
	}
}

func interruptJSON(t *testing.T, p string) (agui.Interrupt, string) {
	t.Helper()
	var proj map[string]any
	if err := json.Unmarshal([]byte(p), &proj); err != nil {
		t.Fatal(err)
	}
	in := BuildInterrupt(proj)
	b, _ := json.Marshal(in.ResponseSchema)
	return in, string(b)
}

func TestInterruptKinds(t *testing.T) {
	freeText := `{"additionalProperties":false,"properties":{"freeText":{"minLength":1,"type":"string"}},"required":["freeText"],"type":"object"}`
	sel := func(id, title string) string {
		return `{"additionalProperties":false,"properties":{"selectedId":{"const":"` + id + `","title":"` + title + `","type":"string"}},"required":["selectedId"],"type":"object"}`
	}
	cases := []struct {
		name, proj, reason, message, toolCallID, schema, stdOpts string
	}{
		{"permission title fallback", `{"kind":"permission","inputId":"p1","title":"Delete stack","language":"zh-CN"}`,
			"tool_call", "Delete stack", "",
			`{"additionalProperties":false,"properties":{"decision":{"enum":["allow_once","deny"],"type":"string"}},"required":["decision"],"type":"object"}`, `[]`},
		{"permission default message", `{"kind":"permission","inputId":"p2","toolUseId":"tu"}`,
			"tool_call", "Permission required", "tu",
			`{"additionalProperties":false,"properties":{"decision":{"enum":["allow_once","deny"],"type":"string"}},"required":["decision"],"type":"object"}`, `[]`},
		{"resource selection", `{"kind":"cloud_resource_selection","inputId":"r1","toolUseId":"tu9","selector":{"id":"vpc"}}`,
			"input_required", "Input required", "tu9",
			`{"oneOf":[{"additionalProperties":false,"properties":{"label":{"type":"string"},"value":{"minLength":1,"type":"string"}},"required":["value"],"type":"object"},` + freeText + `]}`, `[]`},
		{"question with options", `{"kind":"ask_user_question","inputId":"ask-tu","prompt":"Which region?","allowFreeText":true,"options":[{"id":"cn","label":"China"},{"id":"us","name":"US"}]}`,
			"input_required", "Which region?\n- cn: China\n- us: US", "",
			`{"oneOf":[` + sel("cn", "China") + `,` + sel("us", "US") + `,` + freeText + `]}`,
			`[{"id":"cn","title":"China"},{"id":"us","title":"US"}]`},
		{"question without free text", `{"kind":"candidate_selection","inputId":"input-e1","prompt":"Pick","options":[{"candidate_index":0.0,"label":"Plan A"},{"candidate_index":1.0,"name":"Plan B"}]}`,
			"input_required", "Pick\n- 0: Plan A\n- 1: Plan B", "",
			`{"oneOf":[` + sel("0", "Plan A") + `,` + sel("1", "Plan B") + `]}`,
			`[{"id":"0","title":"Plan A"},{"id":"1","title":"Plan B"}]`},
		{"question no options", `{"kind":"ask_user_question","inputId":"q"}`,
			"input_required", "Input required", "", `{"oneOf":[` + freeText + `]}`, `[]`},
		{"option id rules", `{"inputId":"q2","prompt":"P","options":[{"label":"pos"},{"id":"","title":"empty"},"x","x",{"id":"x"},{"id":"x-2","label":"taken"},7.0]}`,
			"input_required", "P\n- 0: pos\n- option-2: empty\n- x: x\n- x-2: x\n- x-3: x\n- x-2-2: taken\n- 7: 7", "",
			`{"oneOf":[` + sel("0", "pos") + `,` + sel("option-2", "empty") + `,` + sel("x", "x") + `,` + sel("x-2", "x") + `,` + sel("x-3", "x") + `,` + sel("x-2-2", "taken") + `,` + sel("7", "7") + `]}`,
			`[{"id":"0","title":"pos"},{"id":"option-2","title":"empty"},{"id":"x","title":"x"},{"id":"x-2","title":"x"},{"id":"x-3","title":"x"},{"id":"x-2-2","title":"taken"},{"id":"7","title":"7"}]`},
		{"deployment confirmation", `{"kind":"deployment_confirmation","inputId":"d1","prompt":"Deploy?","options":[{"id":"go","label":"Deploy","action":"confirm"},{"id":"back","label":"Back","action":"reselect"},{"id":"stop","label":"Stop","action":"cancel"}]}`,
			"input_required", "Deploy?\n- go: Deploy\n- back: Back\n- stop: Stop", "",
			`{"oneOf":[` +
				`{"additionalProperties":false,"properties":{"parameter_overrides":{"type":"object"},"selectedId":{"const":"go","title":"Deploy","type":"string"}},"required":["selectedId"],"type":"object"},` +
				`{"additionalProperties":false,"properties":{"parameter_overrides":{"type":"object"},"selectedId":{"const":"back","title":"Back","type":"string"}},"required":["selectedId"],"type":"object"},` +
				`{"additionalProperties":false,"properties":{"parameter_overrides":{"type":"object"},"selectedId":{"const":"stop","title":"Stop","type":"string"}},"required":["selectedId"],"type":"object"},` +
				`{"additionalProperties":false,"properties":{"action":{"enum":["cancel","confirm","reselect"],"type":"string"},"parameter_overrides":{"type":"object"}},"required":["action"],"type":"object"}]}`,
			`[{"id":"go","title":"Deploy"},{"id":"back","title":"Back"},{"id":"stop","title":"Stop"}]`},
		{"deployment confirmation with invalid action", `{"kind":"deployment_confirmation","inputId":"d2","prompt":"Deploy?","options":[{"id":"go","action":"launch"}]}`,
			"input_required", "Deploy?\n- go: go", "",
			`{"oneOf":[` + sel("go", "go") + `]}`, `[{"id":"go","title":"go"}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, schema := interruptJSON(t, c.proj)
			if in.Reason != c.reason || in.Message != c.message || in.ToolCallID != c.toolCallID {
				t.Errorf("reason %q message %q toolCallId %q", in.Reason, in.Message, in.ToolCallID)
			}
			if schema != c.schema {
				t.Errorf("schema\ngot  %s\nwant %s", schema, c.schema)
			}
			so, _ := json.Marshal(in.Metadata["standardOptions"])
			if string(so) != c.stdOpts {
				t.Errorf("standardOptions %s, want %s", so, c.stdOpts)
			}
			if in.Metadata["schemaVersion"] != 1 && in.Metadata["schemaVersion"] != 1.0 {
				t.Errorf("metadata.schemaVersion %v", in.Metadata["schemaVersion"])
			}
			if _, ok := in.Metadata["expiresAt"]; ok {
				t.Error("expiresAt present")
			}
		})
	}
}

func TestInterruptIDWithoutInputIDIsStable(t *testing.T) {
	p := map[string]any{"kind": "ask_user_question", "prompt": "x"}
	a, b := BuildInterrupt(p), BuildInterrupt(p)
	if a.ID != b.ID || !strings.HasPrefix(a.ID, "input-") || len(a.ID) != len("input-")+32 {
		t.Fatalf("ids %q %q", a.ID, b.ID)
	}
}

func TestNormalizeLang(t *testing.T) {
	for in, want := range map[any]string{" ZH_cn ": "zh", "ja-JP": "ja", "pt": "pt", "xx": "en", nil: "en", 3.0: "en", "": "en"} {
		if got := normalizeLang(in); got != want {
			t.Errorf("normalizeLang(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestRequiredInputs(t *testing.T) {
	answered := map[string]bool{"perm-old": true}
	m := newTestMapper(Config{Answered: func(id string) bool { return answered[id] }})
	frame := status(t, "WORKING", "", `{
		"input":{"kind":"permission","inputId":"perm-a","requestTaskId":"task-1","contextId":"ctx-1","required":true,"scope":"candidate","extra":"dropped","prompt":"A?"},
		"pendingPermissions":[
			{"kind":"permission","inputId":"perm-a","required":true},
			{"kind":"permission","inputId":"perm-b","required":true,"subPipelineId":"sp1","permission":{"pending":true}},
			{"kind":"permission","inputId":"perm-c","required":false},
			{"kind":"permission","inputId":"perm-old","required":true},
			{"kind":"permission","inputId":"perm-d","required":"true"}]}`)
	ins := m.RequiredInputs(frame)
	got, _ := json.Marshal(ins)
	want := `[{"ID":"perm-a","Projection":{"contextId":"ctx-1","inputId":"perm-a","kind":"permission","prompt":"A?","requestTaskId":"task-1","required":true,"scope":"candidate"},"Sideband":true},` +
		`{"ID":"perm-b","Projection":{"inputId":"perm-b","kind":"permission","required":true,"subPipelineId":"sp1"},"Sideband":true}]`
	if string(got) != want {
		t.Fatalf("inputs\ngot  %s\nwant %s", got, want)
	}
	if again := m.RequiredInputs(frame); len(again) != 0 {
		t.Fatalf("returned twice: %+v", again)
	}

	// A direct input in parent scope is not sideband; one without inputId gets an id.
	m = newTestMapper(Config{})
	ins = m.RequiredInputs(status(t, "INPUT_REQUIRED", "", `{"input":{"kind":"ask_user_question","required":true,"scope":"step","prompt":"Q"}}`))
	if len(ins) != 1 || ins[0].Sideband || ins[0].ID != "input-00000000000000000000000000000001" || ins[0].Projection["inputId"] != ins[0].ID {
		t.Fatalf("inputs %+v", ins)
	}
	if b := BuildInterrupt(ins[0].Projection); b.ID != ins[0].ID {
		t.Fatalf("interrupt id %q, want %q", b.ID, ins[0].ID)
	}
	if m.RequiredInputs(status(t, "INPUT_REQUIRED", "", `{"input":{"kind":"ask_user_question","required":true,"scope":"step","prompt":"Q"}}`)) != nil {
		t.Fatal("id-less input returned twice")
	}
	if m.RequiredInputs(status(t, "INPUT_REQUIRED", "", "")) != nil {
		t.Fatal("inputs from an end-of-turn frame")
	}
}

func TestForeignInput(t *testing.T) {
	in := func(task, ctx string) Input {
		p := map[string]any{}
		if task != "" {
			p["requestTaskId"] = task
		}
		if ctx != "" {
			p["contextId"] = ctx
		}
		return Input{ID: "i", Projection: p}
	}
	cases := []struct {
		in   Input
		want bool
	}{
		{in("task-1", "ctx-1"), false},
		{in("task-2", "ctx-1"), true},
		{in("task-1", "ctx-2"), true},
		{in("", ""), false},
	}
	for i, c := range cases {
		if got := ForeignInput(c.in, "task-1", "ctx-1"); got != c.want {
			t.Errorf("case %d: got %v", i, got)
		}
	}
}

// The projection of a required input is a copy: the adapter persists and
// the mapper edits it while the decoded event may still be read.
func TestRequiredInputsProjectionIsACopy(t *testing.T) {
	m := newTestMapper(Config{})
	ev := status(t, "INPUT_REQUIRED", "", `{"input":{"kind":"candidate_selection","inputId":"sel-1","required":true,"options":[{"id":"a"}],"toolInput":{"password":"p"}}}`)
	ins := m.RequiredInputs(ev)
	if len(ins) != 1 || ins[0].Projection["toolInput"] != nil {
		t.Fatalf("inputs %+v", ins)
	}
	ins[0].Projection["options"].([]any)[0].(map[string]any)["id"] = "changed"
	direct := ev.IacCode()["input"].(map[string]any)
	if id := direct["options"].([]any)[0].(map[string]any)["id"]; id != "a" {
		t.Fatalf("event option id = %v after editing the projection", id)
	}
}

// TestPermissionPrompt: a prompt that is the title, a space and the
// question gets the title's sentence ended, in the projection's language.
func TestPermissionPrompt(t *testing.T) {
	for _, c := range []struct{ prompt, title, lang, want string }{
		{"Run a local shell command Allow once?", "Run a local shell command", "en", "Run a local shell command. Allow once?"},
		{"Ejecutar un comando de shell local ¿Permitir una vez?", "Ejecutar un comando de shell local", "es", "Ejecutar un comando de shell local. ¿Permitir una vez?"},
		{"运行本地 Shell 命令 是否允许一次？", "运行本地 Shell 命令", "zh", "运行本地 Shell 命令。是否允许一次？"},
		{"Run it. Allow once?", "Run it.", "en", "Run it. Allow once?"},
		{"Allow bash to run pwd?", "Run a local shell command", "en", "Allow bash to run pwd?"},
		{"Run a local shell command", "Run a local shell command", "en", "Run a local shell command"},
		{"", "Run a local shell command", "en", ""},
	} {
		if got := permissionPrompt(c.prompt, c.title, i18n.Lang(c.lang)); got != c.want {
			t.Errorf("permissionPrompt(%q, %q, %s) = %q, want %q", c.prompt, c.title, c.lang, got, c.want)
		}
	}
}
