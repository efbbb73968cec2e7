package handoff

import (
	"encoding/json"
	"errors"
	"testing"
)

func payload(t *testing.T, pending string) map[string]any {
	t.Helper()
	var p map[string]any
	raw := `{"receipt":{"protocol":"agui","guidanceId":"g-1","cwd":"/w","userId":"u-1","mode":"pipeline",
		"aguiIdentity":{"threadId":"th-1","rosInvocationId":"ros-1","executionId":"e-1"}},
		"target":{"sandboxId":"sb","activationId":"a","runId":"r","leaseId":"l"},"inputDigest":"d-1",
		"callerMetadata":{"iac_code":{"iac_code_api_key":"k","alibaba_cloud_region_id":"cn-beijing","llm_headers":{"X":"y"},"unknown":"dropped"}},
		"pendingInput":` + pending + `}`
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRebuildRawRunInput: a stored raw run input is the envelope; the
// identity, the fence and the caller's credentials are the payload's.
func TestRebuildRawRunInput(t *testing.T) {
	p := payload(t, `{"agui_raw_input":{"run_input":{"threadId":"other","runId":"other","state":{},"tools":[],"context":[],
		"messages":[{"id":"m-9","role":"user","content":"steer left"}],"forwardedProps":{"iacCode":{"cwd":"/elsewhere"}}}}}`)
	in, body, err := Rebuild(p)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		ThreadID, RunID string
		Messages        []map[string]any
		ForwardedProps  struct{ IacCode map[string]any }
	}
	_ = json.Unmarshal(body, &env)
	ic := env.ForwardedProps.IacCode
	if in.ThreadID != "th-1" || in.RunID != "g-1" || env.Messages[0]["content"] != "steer left" || ic["cwd"] != "/w" ||
		ic["activeGuidance"] != true || ic["llmApiKey"] != "k" || ic["alibabaCloud"].(map[string]any)["regionId"] != "cn-beijing" ||
		ic["runMode"] != "pipeline" || ic["rosInvocationId"] != "ros-1" || ic["unknown"] != nil {
		t.Fatalf("rebuilt %s", body)
	}
}

// TestRebuildResume: interrupt responses make a resume, not a guidance.
func TestRebuildResume(t *testing.T) {
	_, body, err := Rebuild(payload(t, `{"interrupt_responses":[{"interruptId":"i-1","status":"resolved","payload":{"freeText":"x"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]any
	_ = json.Unmarshal(body, &env)
	if env["resume"] == nil || env["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["activeGuidance"] != false {
		t.Fatalf("rebuilt %s", body)
	}
}

func TestRebuildRefusals(t *testing.T) {
	for name, pending := range map[string]string{
		"images without parts":  `{"image_attachments":{"items":[{"size_bytes":1,"sha256":"x","media_type":"image/png","filename":"a.png"}]},"image_parts":[{}, {}]}`,
		"image not base64":      `{"image_attachments":{"items":[{"bytes_base64":"%%%","size_bytes":1,"sha256":"x","media_type":"image/png","filename":"a.png"}]}}`,
		"image without type":    `{"image_attachments":{"items":[{"bytes_base64":"AA==","size_bytes":1,"sha256":"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d","filename":"a.png"}]}}`,
		"pending not an object": `"query"`,
	} {
		if _, _, err := Rebuild(payload(t, pending)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	p := payload(t, `{"query":"q"}`)
	delete(p["receipt"].(map[string]any), "guidanceId")
	if _, _, err := Rebuild(p); !errors.Is(err, ErrInvalid) {
		t.Errorf("no guidanceId: %v", err)
	}
}
