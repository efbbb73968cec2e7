package request

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func fp(iac string) json.RawMessage { return json.RawMessage(`{"iacCode":` + iac + `}`) }

const minimal = `{"schemaVersion":1,"rosInvocationId":"invocation-1","cwd":"/workspace/session-1"}`

func TestParseForwardedPropsFull(t *testing.T) {
	ic, err := ParseForwardedProps(fp(`{
		"schemaVersion":1,"rosInvocationId":"invocation-1","cwd":"/workspace/session-1",
		"model":"qwen-max","llmApiKey":"sk-1","llmHeaders":{"X-Trace":"a"},
		"thinking":{"enabled":true,"effort":"high","budget":2048},
		"userId":"u-1","channel":"web","preferredLanguage":"es",
		"candidatePresentation":"rich","runMode":"pipeline","pipelineName":"selling",
		"cleanupOnly":true,"activeGuidance":true,"guidanceId":"g-1",
		"alibabaCloud":{"accessKeyId":"AK","accessKeySecret":"SK","securityToken":"ST","regionId":"cn-beijing"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !ic.ActiveGuidance || ic.GuidanceID != "g-1" {
		t.Fatalf("guidance = %v %q", ic.ActiveGuidance, ic.GuidanceID)
	}
	if ic.SchemaVersion != 1 || ic.RosInvocationID != "invocation-1" || ic.CWD != "/workspace/session-1" ||
		ic.Model != "qwen-max" || ic.LLMApiKey != "sk-1" || !ic.LLMHeadersSet || ic.LLMHeaders["X-Trace"] != "a" ||
		ic.Channel != "web" || ic.PreferredLanguage != "es" || ic.CandidatePresentation != "rich" ||
		ic.RunMode != "pipeline" || ic.PipelineName != "selling" || !ic.CleanupOnly {
		t.Fatalf("unexpected %+v", *ic)
	}
	if ic.UserID == nil || *ic.UserID != "u-1" {
		t.Fatalf("userId = %v", ic.UserID)
	}
	if *ic.Thinking != (Thinking{Enabled: true, Effort: "high", Budget: 2048}) {
		t.Fatalf("thinking = %+v", *ic.Thinking)
	}
	if *ic.AlibabaCloud != (AlibabaCloud{"AK", "SK", "ST", "cn-beijing"}) {
		t.Fatalf("alibabaCloud = %+v", *ic.AlibabaCloud)
	}
}

func TestParseForwardedPropsSnakeCase(t *testing.T) {
	ic, err := ParseForwardedProps(json.RawMessage(`{"iac_code":{"schema_version":1,"ros_invocation_id":"r","cwd":"/w",
		"llm_api_key":"k","llm_headers":{},"user_id":"","preferred_language":"zh-CN","candidate_presentation":"standard",
		"run_mode":"normal","pipeline_name":"p","cleanup_only":false,"active_guidance":true,"guidance_id":"g",
		"alibaba_cloud":{"access_key_id":"a","access_key_secret":"b","security_token":"c","region_id":"d"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !ic.ActiveGuidance || ic.GuidanceID != "g" {
		t.Fatalf("guidance = %v %q", ic.ActiveGuidance, ic.GuidanceID)
	}
	if ic.RosInvocationID != "r" || ic.LLMApiKey != "k" || !ic.LLMHeadersSet || len(ic.LLMHeaders) != 0 ||
		ic.UserID == nil || *ic.UserID != "" || ic.PreferredLanguage != "zh-CN" || ic.RunMode != "normal" ||
		*ic.AlibabaCloud != (AlibabaCloud{"a", "b", "c", "d"}) {
		t.Fatalf("unexpected %+v", *ic)
	}
}

func TestParseForwardedPropsMinimalDefaults(t *testing.T) {
	ic, err := ParseForwardedProps(fp(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if ic.UserID != nil || ic.Thinking != nil || ic.AlibabaCloud != nil || ic.LLMHeadersSet || ic.CleanupOnly ||
		ic.ActiveGuidance || ic.GuidanceID != "" {
		t.Fatalf("unexpected %+v", *ic)
	}
	// null is "absent" for the Optional fields of the original schema.
	ic, err = ParseForwardedProps(fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","model":null,
		"llmHeaders":null,"thinking":null,"userId":null,"alibabaCloud":null,"runMode":null,"guidanceId":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if ic.UserID != nil || ic.LLMHeadersSet || ic.Thinking != nil || ic.AlibabaCloud != nil {
		t.Fatalf("unexpected %+v", *ic)
	}
}

func TestParseForwardedPropsRejects(t *testing.T) {
	ros257 := strings.Repeat("é", 257)
	cases := map[string]json.RawMessage{
		"absent":                 nil,
		"not json":               json.RawMessage(`{`),
		"trailing data":          json.RawMessage(`{"iacCode":` + minimal + `} {}`),
		"array":                  json.RawMessage(`[]`),
		"no iacCode":             json.RawMessage(`{}`),
		"extra top key":          json.RawMessage(`{"iacCode":` + minimal + `,"other":1}`),
		"both top spellings":     json.RawMessage(`{"iacCode":` + minimal + `,"iac_code":` + minimal + `}`),
		"iacCode null":           fp(`null`),
		"iacCode string":         fp(`"x"`),
		"unknown key":            fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","extra":true}`),
		"guidance string":        fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","activeGuidance":"true"}`),
		"guidance null":          fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","active_guidance":null}`),
		"guidance both":          fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","activeGuidance":true,"active_guidance":true}`),
		"fence array":            fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","executionFence":[]}`),
		"fence both spellings":   fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","executionFence":{},"execution_fence":{}}`),
		"guidanceId empty":       fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","guidanceId":""}`),
		"guidanceId number":      fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","guidance_id":7}`),
		"inputDigest empty":      fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","input_digest":""}`),
		"inputDigest number":     fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","inputDigest":1}`),
		"schemaVersion missing":  fp(`{"rosInvocationId":"r","cwd":"/w"}`),
		"schemaVersion 2":        fp(`{"schemaVersion":2,"rosInvocationId":"r","cwd":"/w"}`),
		"schemaVersion 1.0":      fp(`{"schemaVersion":1.0,"rosInvocationId":"r","cwd":"/w"}`),
		"schemaVersion 1e0":      fp(`{"schemaVersion":1e0,"rosInvocationId":"r","cwd":"/w"}`),
		"schemaVersion string":   fp(`{"schemaVersion":"1","rosInvocationId":"r","cwd":"/w"}`),
		"schemaVersion true":     fp(`{"schemaVersion":true,"rosInvocationId":"r","cwd":"/w"}`),
		"both spellings":         fp(`{"schemaVersion":1,"schema_version":1,"rosInvocationId":"r","cwd":"/w"}`),
		"ros missing":            fp(`{"schemaVersion":1,"cwd":"/w"}`),
		"ros empty":              fp(`{"schemaVersion":1,"rosInvocationId":"","cwd":"/w"}`),
		"ros null":               fp(`{"schemaVersion":1,"rosInvocationId":null,"cwd":"/w"}`),
		"ros number":             fp(`{"schemaVersion":1,"rosInvocationId":7,"cwd":"/w"}`),
		"ros 257 chars":          fp(`{"schemaVersion":1,"rosInvocationId":"` + ros257 + `","cwd":"/w"}`),
		"cwd missing":            fp(`{"schemaVersion":1,"rosInvocationId":"r"}`),
		"model number":           fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","model":5}`),
		"headers array":          fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","llmHeaders":[]}`),
		"headers number value":   fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","llmHeaders":{"a":1}}`),
		"headers null value":     fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","llmHeaders":{"a":null}}`),
		"thinking unknown key":   fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","thinking":{"level":1}}`),
		"thinking enabled str":   fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","thinking":{"enabled":"true"}}`),
		"thinking enabled null":  fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","thinking":{"enabled":null}}`),
		"budget zero":            fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","thinking":{"budget":0}}`),
		"budget negative":        fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","thinking":{"budget":-5}}`),
		"budget float":           fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","thinking":{"budget":2048.0}}`),
		"budget string":          fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","thinking":{"budget":"2048"}}`),
		"budget overflow":        fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","thinking":{"budget":9223372036854775808}}`),
		"thinking array":         fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","thinking":[]}`),
		"presentation rich-v1":   fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","candidatePresentation":"rich-v1"}`),
		"presentation empty":     fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","candidatePresentation":""}`),
		"runMode other":          fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","runMode":"Normal"}`),
		"cleanupOnly string":     fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","cleanupOnly":"false"}`),
		"cleanupOnly null":       fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","cleanupOnly":null}`),
		"userId number":          fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","userId":1}`),
		"cloud unknown key":      fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","alibabaCloud":{"secret":"x"}}`),
		"cloud both spellings":   fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","alibabaCloud":{"regionId":"a","region_id":"a"}}`),
		"cloud number":           fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","alibabaCloud":{"regionId":1}}`),
		"cloud string":           fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","alibabaCloud":"x"}`),
		"top-level camel+snake2": fp(`{"schemaVersion":1,"rosInvocationId":"r","ros_invocation_id":"r","cwd":"/w"}`),
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			ic, err := ParseForwardedProps(raw)
			if !errors.Is(err, ErrInvalidForwardedProps) || ic != nil {
				t.Fatalf("got %v, %v; want ErrInvalidForwardedProps", ic, err)
			}
		})
	}
}

func TestParseForwardedPropsRosLimitCountsCodePoints(t *testing.T) {
	// 256 two-byte characters (512 bytes) is still within the limit.
	ros := strings.Repeat("é", 256)
	ic, err := ParseForwardedProps(fp(`{"schemaVersion":1,"rosInvocationId":"` + ros + `","cwd":"/w"}`))
	if err != nil || ic.RosInvocationID != ros {
		t.Fatalf("got %v, %v", ic, err)
	}
}

func TestParseForwardedPropsErrorHidesValues(t *testing.T) {
	_, err := ParseForwardedProps(fp(`{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","llmApiKey":42,"llmHeaders":{"a":"sk-secret"}}`))
	if err == nil || strings.Contains(err.Error(), "sk-secret") || strings.Contains(err.Error(), "42") {
		t.Fatalf("err = %v", err)
	}
}

func TestPreferredLanguage(t *testing.T) {
	cases := map[string]string{
		`{"forwardedProps":{"iacCode":{"preferredLanguage":"zh-CN"}}}`:                           "zh-CN",
		`{"forwardedProps":{"iacCode":{"preferred_language":"es"}}}`:                             "es",
		`{"forwardedProps":{"iac_code":{"preferredLanguage":"ja"}}}`:                             "ja",
		`{"messages":"bad","forwardedProps":{"iacCode":{"preferredLanguage":"fr","unknown":1}}}`: "fr",
		`{"forwardedProps":{"iacCode":{"preferredLanguage":5}}}`:                                 "",
		`{"forwardedProps":{"iacCode":"x"}}`:                                                     "",
		`{"forwardedProps":[]}`:                                                                  "",
		`{"ForwardedProps":{"iacCode":{"preferredLanguage":"de"}}}`:                              "",
		`{"forwardedProps":{"IacCode":{"preferredLanguage":"de"}}}`:                              "",
		`[1,2]`: "",
		`{`:     "",
		`{"forwardedProps":{"iacCode":{"preferredLanguage":"pt","preferred_language":"de"}}}`: "pt",
	}
	for body, want := range cases {
		if got := PreferredLanguage(json.RawMessage(body)); got != want {
			t.Errorf("PreferredLanguage(%s) = %q, want %q", body, got, want)
		}
		// The server takes it from the decoded body's member.
		var top map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &top) != nil {
			continue
		}
		if got := ForwardedLanguage(top["forwardedProps"]); got != want {
			t.Errorf("ForwardedLanguage of %s = %q, want %q", body, got, want)
		}
	}
}
