package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
)

func validator(t *testing.T) *Validator {
	t.Helper()
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCheckedInFilesAreCurrent fails when schemas/ differs from what the
// Go definitions generate: run `go generate ./internal/contract`.
func TestCheckedInFilesAreCurrent(t *testing.T) {
	for name, want := range Files() {
		got, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale or missing (%v): run go generate ./internal/contract", name, err)
		}
	}
	entries, err := filepath.Glob(filepath.Join("..", "..", "schemas", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	files := Files()
	for _, e := range entries {
		if _, ok := files["schemas/"+filepath.Base(e)]; !ok {
			t.Errorf("%s is not generated any more: delete it", e)
		}
	}
}

func TestTypeScriptPackage(t *testing.T) {
	raw, err := os.ReadFile("../../schemas/ts/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Name, Types, Main string }
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Name != "@iac-code-agui/protocol" || pkg.Types != "index.d.ts" || pkg.Main != "index.js" {
		t.Fatalf("package.json: %+v", pkg)
	}
	ts := TypeScript()
	for _, want := range []string{"export interface IacCode {", "  rosInvocationId: string;", "export type QuestionAnswer = {", "  freeText: string;",
		`"iac-code.session.v1": IacCodeSessionV1;`, "export type Interrupt = PermissionInterrupt | CloudResourceSelectionInterrupt | DeploymentConfirmationInterrupt | QuestionInterrupt;"} {
		if !strings.Contains(ts, want) {
			t.Errorf("index.d.ts lacks %q", want)
		}
	}
}

// TestForwardedPropsAgreesWithRequest: the schema accepts exactly what
// request.ParseForwardedProps accepts, on a table of edge cases.
func TestForwardedPropsAgreesWithRequest(t *testing.T) {
	v := validator(t)
	base := `"schemaVersion":1,"rosInvocationId":"inv-1","cwd":"/w"`
	cases := []string{
		`{"iacCode":{` + base + `}}`,
		`{"iac_code":{` + base + `}}`,
		`{"iacCode":{"schema_version":1,"ros_invocation_id":"inv-1","cwd":"/w"}}`,
		`{"iacCode":{` + base + `},"iac_code":{` + base + `}}`,
		`{"iacCode":{` + base + `,"schema_version":1}}`,
		`{}`,
		`{"iacCode":{` + base + `},"other":1}`,
		`{"iacCode":{"schemaVersion":2,"rosInvocationId":"inv-1","cwd":"/w"}}`,
		`{"iacCode":{"schemaVersion":"1","rosInvocationId":"inv-1","cwd":"/w"}}`,
		`{"iacCode":{"schemaVersion":1,"rosInvocationId":"","cwd":"/w"}}`,
		`{"iacCode":{"schemaVersion":1,"rosInvocationId":"` + strings.Repeat("é", 256) + `","cwd":"/w"}}`,
		`{"iacCode":{"schemaVersion":1,"rosInvocationId":"` + strings.Repeat("é", 257) + `","cwd":"/w"}}`,
		`{"iacCode":{"schemaVersion":1,"rosInvocationId":"inv-1"}}`,
		`{"iacCode":{` + base + `,"model":null,"llmApiKey":"k","channel":"web","preferredLanguage":"es","pipelineName":"p"}}`,
		`{"iacCode":{` + base + `,"model":3}}`,
		`{"iacCode":{` + base + `,"runMode":"pipeline","candidatePresentation":"rich"}}`,
		`{"iacCode":{` + base + `,"run_mode":"fast"}}`,
		`{"iacCode":{` + base + `,"runMode":null}}`,
		`{"iacCode":{` + base + `,"llmHeaders":{"X-A":"b"}}}`,
		`{"iacCode":{` + base + `,"llmHeaders":{"X-A":1}}}`,
		`{"iacCode":{` + base + `,"llm_headers":{}}}`,
		`{"iacCode":{` + base + `,"thinking":{"enabled":true,"effort":"high","budget":1024}}}`,
		`{"iacCode":{` + base + `,"thinking":{"budget":0}}}`,
		`{"iacCode":{` + base + `,"thinking":{"budget":"1"}}}`,
		`{"iacCode":{` + base + `,"thinking":{"mode":"x"}}}`,
		`{"iacCode":{` + base + `,"thinking":null}}`,
		`{"iacCode":{` + base + `,"userId":"` + strings.Repeat("u", 257) + `"}}`,
		`{"iacCode":{` + base + `,"user_id":""}}`,
		`{"iacCode":{` + base + `,"cleanupOnly":true,"activeGuidance":false}}`,
		`{"iacCode":{` + base + `,"cleanupOnly":null}}`,
		`{"iacCode":{` + base + `,"guidanceId":""}}`,
		`{"iacCode":{` + base + `,"guidance_id":"g-1"}}`,
		`{"iacCode":{` + base + `,"alibabaCloud":{"accessKeyId":"a","access_key_secret":"s","securityToken":"t","regionId":"cn"}}}`,
		`{"iacCode":{` + base + `,"alibabaCloud":{"accessKeyId":"a","access_key_id":"a"}}}`,
		`{"iacCode":{` + base + `,"alibabaCloud":{"endpoint":"x"}}}`,
		`{"iacCode":{` + base + `,"executionFence":1}}`,
		`{"iacCode":"x"}`,
	}
	for _, c := range cases {
		_, perr := request.ParseForwardedProps(json.RawMessage(c))
		verr := v.Validate(FileForwardedProps, json.RawMessage(c))
		if (perr == nil) != (verr == nil) {
			t.Errorf("%s: request says %v, schema says %v", c, perr, verr)
		}
	}
}

// TestAnswerSchemasCoverMapper: whatever responseSchema BuildInterrupt
// makes, a payload valid for it is valid for the published answer of its
// kind, and the interrupt itself matches the published interrupt shape.
func TestAnswerSchemasCoverMapper(t *testing.T) {
	v := validator(t)
	opts := func(n int) []any {
		var out []any
		for i := range n {
			out = append(out, map[string]any{"id": "opt-" + string(rune('a'+i)), "label": "Option", "action": []string{"confirm", "adjust", "cancel", "reselect"}[i%4]})
		}
		return out
	}
	type tc struct {
		projection map[string]any
		valid      []string
		invalid    []string
	}
	cases := []tc{
		{map[string]any{"kind": "permission", "inputId": "p1", "toolUseId": "t1", "toolName": "bash", "prompt": "Run?"},
			[]string{`{"decision":"allow_once"}`, `{"decision":"deny"}`}, []string{`{"decision":"always"}`, `{}`}},
		{map[string]any{"kind": "cloud_resource_selection", "inputId": "r1", "toolUseId": "t2", "selector": map[string]any{"id": "vswitch"}},
			[]string{`{"value":"vsw-1"}`, `{"value":"vsw-1","label":"VSwitch 1"}`, `{"freeText":"vsw-9"}`}, []string{`{"value":""}`, `{"text":"x"}`}},
		{map[string]any{"kind": "deployment_confirmation", "inputId": "d1", "options": opts(3)},
			[]string{`{"selectedId":"opt-a"}`, `{"selectedId":"opt-b","parameter_overrides":{"Size":2}}`, `{"action":"adjust","parameter_overrides":{}}`}, []string{`{"action":"explode"}`, `{"text":"x"}`}},
		{map[string]any{"kind": "deployment_confirmation", "inputId": "d2", "options": []any{"a", "b"}},
			[]string{`{"selectedId":"a"}`}, []string{`{"action":"confirm"}`}},
		{map[string]any{"kind": "ask_user_question", "inputId": "q1", "options": opts(2), "allowFreeText": true},
			[]string{`{"selectedId":"opt-a"}`, `{"freeText":"mine"}`}, []string{`{"text":"mine"}`, `{"freeText":""}`}},
		{map[string]any{"kind": "ask_user_question", "inputId": "q2"},
			[]string{`{"freeText":"mine"}`}, []string{`{"text":"mine"}`}},
		{map[string]any{"kind": "candidate_selection", "inputId": "c1", "options": []any{map[string]any{"candidate_index": 0.0, "name": "A"}, map[string]any{"candidate_index": 1.0}}},
			[]string{`{"selectedId":"0"}`, `{"selectedId":"1"}`}, []string{`{"selectedId":0}`}},
		{map[string]any{"kind": "something_new", "inputId": "n1", "options": []any{map[string]any{"id": "x"}}},
			[]string{`{"selectedId":"x"}`}, []string{`{}`}},
	}
	for _, c := range cases {
		in := mapper.BuildInterrupt(c.projection)
		raw, err := json.Marshal(map[string]any{"id": in.ID, "reason": in.Reason, "message": in.Message, "toolCallId": in.ToolCallID, "responseSchema": in.ResponseSchema, "metadata": in.Metadata})
		if err != nil {
			t.Fatal(err)
		}
		var it map[string]any
		_ = json.Unmarshal(raw, &it)
		if in.ToolCallID == "" {
			delete(it, "toolCallId")
		}
		if err := v.CheckInterrupt(it); err != nil {
			t.Errorf("%v: interrupt: %v", c.projection["inputId"], err)
		}
		exact, err := roundTripCompile(in.ResponseSchema)
		if err != nil {
			t.Fatal(err)
		}
		kind, _ := c.projection["kind"].(string)
		def := FileResume + "#/$defs/" + AnswerDef(kind)
		if kind == "deployment_confirmation" && len(in.ResponseSchema["oneOf"].([]any)) == 2 {
			def = FileResume + "#/$defs/QuestionAnswer" // options that break §5.2
		}
		for _, p := range c.valid {
			doc, _ := roundTrip(json.RawMessage(p))
			if err := exact.Validate(doc); err != nil {
				t.Fatalf("%v: test payload %s invalid for the responseSchema: %v", c.projection["inputId"], p, err)
			}
			if err := v.Validate(def, json.RawMessage(p)); err != nil {
				t.Errorf("%v: %s valid for responseSchema but not for %s: %v", c.projection["inputId"], p, def, err)
			}
		}
		for _, p := range c.invalid {
			doc, _ := roundTrip(json.RawMessage(p))
			if exact.Validate(doc) == nil {
				t.Fatalf("%v: test payload %s valid for the responseSchema", c.projection["inputId"], p)
			}
			if v.Validate(def, json.RawMessage(p)) == nil {
				t.Errorf("%v: %s accepted by %s", c.projection["inputId"], p, def)
			}
		}
	}
}

func TestCheckEvent(t *testing.T) {
	v := validator(t)
	good := map[string]any{"type": "CUSTOM", "name": "iac-code.session.v1", "value": map[string]any{
		"schemaVersion": 1, "threadId": "t", "aguiRunId": "r", "executionId": "e", "contextId": "c", "taskId": nil, "rosInvocationId": "i", "sessionId": "s"}}
	if err := v.CheckEvent(good); err != nil {
		t.Fatal(err)
	}
	bad := map[string]any{"type": "CUSTOM", "name": "iac-code.session.v1", "value": map[string]any{"schemaVersion": 1, "threadId": "t"}}
	if v.CheckEvent(bad) == nil {
		t.Fatal("a session value without its ids passed")
	}
	if err := v.CheckEvent(map[string]any{"type": "CUSTOM", "name": "iac-code.pipeline.v1", "value": map[string]any{"eventType": "pipeline_progress"}}); err == nil {
		t.Fatal("a dropped pipeline type passed")
	}
	if err := v.CheckEvent(map[string]any{"type": "CUSTOM", "name": "other.v1", "value": 1}); err != nil {
		t.Fatal(err)
	}
	resume := []any{map[string]any{"interruptId": "q", "status": "resolved", "payload": map[string]any{"text": "x"}}}
	if v.CheckResume(resume, map[string]string{"q": "ask_user_question"}) == nil {
		t.Fatal("a question answered with {text} passed")
	}
}

func roundTripCompile(s map[string]any) (interface{ Validate(any) error }, error) {
	v, err := roundTrip(s)
	if err != nil {
		return nil, err
	}
	c := newCompiler()
	if err := c.AddResource("urn:test", v); err != nil {
		return nil, err
	}
	return c.Compile("urn:test")
}
