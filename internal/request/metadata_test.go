package request

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func mustParse(t *testing.T, iac string) *IacCode {
	t.Helper()
	ic, err := ParseForwardedProps(fp(iac))
	if err != nil {
		t.Fatal(err)
	}
	return ic
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMetadataNormalRequest(t *testing.T) {
	ic := mustParse(t, `{"schemaVersion":1,"rosInvocationId":"invocation-1","cwd":"/workspace/session-1","runMode":"normal"}`)
	got := marshal(t, Metadata(ic, "/srv/iac/session-1", "en"))
	want := `{"cleanupOnly":false,"cwd":"/srv/iac/session-1","preferredLanguage":"en","rosInvocationId":"invocation-1","run_mode":"normal"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestMetadataAllKeys(t *testing.T) {
	ic := mustParse(t, `{"schemaVersion":1,"rosInvocationId":"invocation-1","cwd":"/raw",
		"model":"  qwen-max ","llmApiKey":" sk-1\n","llmHeaders":{"X-A":"1"},
		"thinking":{"enabled":true,"effort":"high","budget":2048},
		"userId":"u-1","channel":"web","preferredLanguage":"zh-CN",
		"candidatePresentation":"rich","runMode":"pipeline","pipelineName":"selling","cleanupOnly":true,
		"alibabaCloud":{"accessKeyId":"AK","accessKeySecret":"SK","securityToken":"ST","regionId":"cn-beijing"}}`)
	got := marshal(t, Metadata(ic, "/srv/iac/session-1", "zh"))
	want := `{"alibaba_cloud_access_key_id":"AK","alibaba_cloud_access_key_secret":"SK",` +
		`"alibaba_cloud_region_id":"cn-beijing","alibaba_cloud_security_token":"ST",` +
		`"candidatePresentation":"rich","channel":"web","cleanupOnly":true,"cwd":"/srv/iac/session-1",` +
		`"iac_code_api_key":"sk-1","iac_code_model":"qwen-max","llm_headers":{"X-A":"1"},` +
		`"pipeline_name":"selling","preferredLanguage":"zh","rosInvocationId":"invocation-1","run_mode":"pipeline",` +
		`"thinking":{"budget":2048,"effort":"high","enabled":true},"user_id":"u-1"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestMetadataOptionalShapes(t *testing.T) {
	cases := []struct{ iac, want string }{
		// Empty llmHeaders is forwarded: it clears the A2A binding.
		{`"llmHeaders":{}`, `"llm_headers":{}`},
		// Blank model and key are trimmed away.
		{`"model":"  ","llmApiKey":""`, ``},
		// thinking only when a field is set; budget only when > 0.
		{`"thinking":{}`, ``},
		{`"thinking":{"enabled":false}`, ``},
		{`"thinking":{"effort":"low"}`, `"thinking":{"effort":"low","enabled":false}`},
		{`"thinking":{"enabled":true}`, `"thinking":{"enabled":true}`},
		// An explicit empty userId differs from an absent one.
		{`"userId":""`, `"user_id":""`},
		{`"alibabaCloud":{"regionId":"cn-hangzhou"}`, `"alibaba_cloud_region_id":"cn-hangzhou"`},
		// guidance_id travels; activeGuidance itself is the adapter's (§5.13).
		{`"activeGuidance":true,"guidanceId":"g-1"`, `"guidance_id":"g-1"`},
		{`"activeGuidance":true`, ``},
		// The handoff fields travel as they came (§10.4).
		{`"inputDigest":"d-1","execution_fence":{"version":"session-handoff-v1","owner":{"sandboxId":"sb-2"}}`,
			`"input_digest":"d-1","execution_fence":{"version":"session-handoff-v1","owner":{"sandboxId":"sb-2"}}`},
	}
	for _, c := range cases {
		ic := mustParse(t, `{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w",`+c.iac+`}`)
		md := Metadata(ic, "", "")
		want := `{"cleanupOnly":false,"rosInvocationId":"r"}`
		if c.want != "" {
			want = `{` + c.want + `,"cleanupOnly":false,"rosInvocationId":"r"}`
			var m map[string]any
			_ = json.Unmarshal([]byte(want), &m)
			want = marshal(t, m)
		}
		if got := marshal(t, md); got != want {
			t.Errorf("%s: got %s, want %s", c.iac, got, want)
		}
	}
}

func TestRedactionHidesSecrets(t *testing.T) {
	ic := mustParse(t, `{"schemaVersion":1,"rosInvocationId":"invocation-1","cwd":"/w",
		"llmApiKey":"sk-LLMKEY","llmHeaders":{"Authorization":"Bearer HDRSECRET"},
		"alibabaCloud":{"accessKeyId":"AKIDVALUE","accessKeySecret":"AKSECRET","securityToken":"STSTOKEN","regionId":"cn-beijing"}}`)
	var logBuf strings.Builder
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("run", "iacCode", ic)
	outputs := map[string]string{
		"Redacted": Redacted(ic),
		"%v":       fmt.Sprintf("%v", ic),
		"%+v":      fmt.Sprintf("%+v", ic),
		"%#v":      fmt.Sprintf("%#v", ic),
		"slog":     logBuf.String(),
	}
	for name, out := range outputs {
		for _, secret := range []string{"sk-LLMKEY", "HDRSECRET", "AKIDVALUE", "AKSECRET", "STSTOKEN"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s leaks %s: %s", name, secret, out)
			}
		}
		if !strings.Contains(out, "invocation-1") {
			t.Errorf("%s lacks the invocation id: %s", name, out)
		}
	}
	if !strings.Contains(outputs["Redacted"], "llmApiKey=[REDACTED]") || !strings.Contains(outputs["Redacted"], "[Authorization]") {
		t.Errorf("Redacted = %s", outputs["Redacted"])
	}
}

// TestHandoffMetadata: a permission answer carries only the handoff keys,
// and nothing without a digest or a fence.
func TestHandoffMetadata(t *testing.T) {
	if md := HandoffMetadata(mustParse(t, `{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","guidanceId":"g","model":"m"}`)); md != nil {
		t.Fatalf("without a digest or a fence: %v", md)
	}
	ic := mustParse(t, `{"schemaVersion":1,"rosInvocationId":"r","cwd":"/w","guidanceId":"g","inputDigest":"d","model":"m","llmApiKey":"k",
		"executionFence":{"version":"session-handoff-v1","owner":{"sandboxId":"s"}}}`)
	if got := marshal(t, HandoffMetadata(ic)); got != `{"execution_fence":{"owner":{"sandboxId":"s"},"version":"session-handoff-v1"},"guidance_id":"g","input_digest":"d"}` {
		t.Fatalf("got %s", got)
	}
}
