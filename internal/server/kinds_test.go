package server_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The two later input kinds end to end (protocol.md §5.2, §5.7, §5.8): cloud
// resource selection and deployment confirmation, through the real adapter
// and the embedded agent over loopback HTTP.

const selectionPrefix = "[iac-code:cloud_resource_selection] "

const resourceSchema = `{"oneOf":[` +
	`{"additionalProperties":false,"properties":{"label":{"type":"string"},"value":{"minLength":1,"type":"string"}},"required":["value"],"type":"object"},` +
	`{"additionalProperties":false,"properties":{"freeText":{"minLength":1,"type":"string"}},"required":["freeText"],"type":"object"}]}`

// answerTexts returns the text parts the agent received on task taskID
// through SendStreamingMessage, in order.
func answerTexts(e *env, taskID string) []string {
	var out []string
	for _, c := range e.Agent.Calls() {
		if c.Method != "SendStreamingMessage" || c.TaskID != taskID {
			continue
		}
		for _, p := range c.Parts {
			if p.Text != "" {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// selectionAnswers decodes the resource-selection answers sent on taskID.
func selectionAnswers(t *testing.T, e *env, taskID string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, text := range answerTexts(e, taskID) {
		body, ok := strings.CutPrefix(text, selectionPrefix)
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("selection answer is not JSON: %q", text)
		}
		if compact, _ := json.Marshal(m); len(compact) != len(body) {
			t.Fatalf("selection answer is not compact JSON: %q", body)
		}
		out = append(out, m)
	}
	return out
}

// toolResults returns the TOOL_CALL_RESULT events for toolCallID.
func toolResults(evs []map[string]any, toolCallID string) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		if ev["type"] == "TOOL_CALL_RESULT" && ev["toolCallId"] == toolCallID {
			out = append(out, ev)
		}
	}
	return out
}

func assertSuccess(t *testing.T, r *response) {
	t.Helper()
	fin := last(r.Events)
	o, _ := fin["outcome"].(map[string]any)
	if fin["type"] != "RUN_FINISHED" || o["type"] != "success" {
		t.Fatalf("want RUN_FINISHED success, got %v (%v)", fin, types(r.Events))
	}
}

func assertRunError(t *testing.T, r *response, code, msg string) {
	t.Helper()
	if fin := last(r.Events); r.Status != 200 || fin["type"] != "RUN_ERROR" || fin["code"] != code || fin["message"] != msg {
		t.Fatalf("want RUN_ERROR %s %q, got %d %v", code, msg, r.Status, fin)
	}
	assertBalanced(t, r.Events)
}

// startSelection runs the resource-selection turn on thread th and returns
// its interrupt.
func startSelection(t *testing.T, e *env, th string) map[string]any {
	t.Helper()
	r := post(t, e.URL, e.body(th, "run-1", "Select a VSwitch for the web server", nil), nil)
	its := interrupts(t, r)
	if len(its) != 1 {
		t.Fatalf("interrupts %v", its)
	}
	assertBalanced(t, r.Events)
	return its[0]
}

func resolve(id any, payload any) map[string]any {
	return map[string]any{"interruptId": id, "status": "resolved", "payload": payload}
}

func TestResourceSelectionResolved(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-resource"
	it := startSelection(t, e, th)
	md := it["metadata"].(map[string]any)
	schema, _ := json.Marshal(it["responseSchema"])
	if it["reason"] != "input_required" || it["toolCallId"] != "toolu_demo_select" || it["id"] != md["inputId"] ||
		!strings.HasPrefix(it["id"].(string), "resource-") || it["message"] != "Select the VSwitch for the ECS instance" ||
		string(schema) != resourceSchema {
		t.Fatalf("interrupt %v schema %s", it, schema)
	}
	wantStd := []any{map[string]any{"id": "vsw-1", "title": "vsw-1 (cn-hangzhou-h)"}, map[string]any{"id": "vsw-2", "title": "vsw-2 (cn-hangzhou-i)"}}
	if !reflect.DeepEqual(md["standardOptions"], wantStd) || md["kind"] != "cloud_resource_selection" || md["schemaVersion"] != 1.0 ||
		md["selector"].(map[string]any)["id"] != "vswitch" {
		t.Fatalf("metadata %v", md)
	}
	taskID, contextID := md["requestTaskId"].(string), md["contextId"].(string)

	// Refused answers reach nothing and leave the interrupt answerable.
	long := strings.Repeat("l", 1025)
	assertRunError(t, post(t, e.URL, resumeBody(e, th, "run-2", resolve(it["id"], map[string]any{"value": "vsw-2", "label": long})), nil),
		"RESUME_PAYLOAD_INVALID", "The resource selection label is too long.")
	// Without a label the value is the label sent, so it has the same limit.
	assertRunError(t, post(t, e.URL, resumeBody(e, th, "run-2b", resolve(it["id"], map[string]any{"value": "vsw-" + long})), nil),
		"RESUME_PAYLOAD_INVALID", "The resource selection label is too long.")
	assertRunError(t, post(t, e.URL, resumeBody(e, th, "run-2c", resolve(it["id"], map[string]any{"freeText": long})), nil),
		"RESUME_PAYLOAD_INVALID", "The resource selection label is too long.")
	assertRunError(t, post(t, e.URL, resumeBody(e, th, "run-3", resolve(it["id"], map[string]any{"value": ""})), nil),
		"RESUME_PAYLOAD_INVALID", "The interrupt response payload is invalid.")
	if got := answerTexts(e, taskID); len(got) != 0 {
		t.Fatalf("refused answers reached A2A: %q", got)
	}

	r := post(t, e.URL, resumeBody(e, th, "run-4", resolve(it["id"], map[string]any{"value": "vsw-2", "label": "vsw-2 (cn-hangzhou-i)"})), nil)
	assertSuccess(t, r)
	assertBalanced(t, r.Events)
	sent := answerTexts(e, taskID)
	want := map[string]any{"schemaVersion": 1.0, "kind": "cloud_resource_selection", "status": "selected",
		"requestTaskId": taskID, "contextId": contextID, "inputId": it["id"], "toolUseId": "toolu_demo_select",
		"selectorId": "vswitch", "value": "vsw-2", "label": "vsw-2 (cn-hangzhou-i)", "source": "option"}
	if got := selectionAnswers(t, e, taskID); len(sent) != 1 || len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("A2A answers %q, want one selection %v", sent, want)
	}
	for _, c := range e.Agent.Calls() {
		if c.TaskID == taskID && c.Method == "SendStreamingMessage" && strings.HasPrefix(c.Parts[0].Text, selectionPrefix) {
			if c.MessageID != "agui-resume-run-4" || c.ContextID != contextID || !contains(c.MetadataKeys, "cwd") {
				t.Fatalf("answer call %+v", c)
			}
		}
	}
	// One result for the selector's tool call, carrying the label (§4.9),
	// not the wire text sent to A2A.
	res := toolResults(r.Events, "toolu_demo_select")
	if len(res) != 1 || res[0]["content"] != "vsw-2 (cn-hangzhou-i)" {
		t.Fatalf("TOOL_CALL_RESULT for the selector: %v", res)
	}
	if !strings.Contains(r.Raw, "Using VSwitch vsw-2 (cn-hangzhou-i) for the ECS instance.") ||
		strings.Contains(r.Raw, "The ECS instance needs a VSwitch") {
		t.Fatalf("continuation text wrong or pre-interrupt text replayed:\n%s", r.Raw)
	}
	// Repeating the accepted answer is not applied again (§5.10).
	again := post(t, e.URL, resumeBody(e, th, "run-5", resolve(it["id"], map[string]any{"value": "vsw-2", "label": "vsw-2 (cn-hangzhou-i)"})), nil)
	assertRunError(t, again, "RESUME_ALREADY_APPLIED", "The interrupt response has already been applied.")
	if n := len(selectionAnswers(t, e, taskID)); n != 1 {
		t.Fatalf("A2A saw %d selection answers, want 1", n)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestResourceSelectionFreeText(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-resource-free"
	it := startSelection(t, e, th)
	md := it["metadata"].(map[string]any)
	taskID := md["requestTaskId"].(string)
	r := post(t, e.URL, resumeBody(e, th, "run-2", resolve(it["id"], map[string]any{"freeText": "vsw-9"})), nil)
	assertSuccess(t, r)
	assertBalanced(t, r.Events)
	got := selectionAnswers(t, e, taskID)
	want := map[string]any{"schemaVersion": 1.0, "kind": "cloud_resource_selection", "status": "selected",
		"requestTaskId": taskID, "contextId": md["contextId"], "inputId": it["id"], "toolUseId": "toolu_demo_select",
		"selectorId": "vswitch", "value": "vsw-9", "label": "vsw-9", "source": "free_text"}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("A2A answers %v, want %v", got, want)
	}
	if n := len(toolResults(r.Events, "toolu_demo_select")); n != 1 || !strings.Contains(r.Raw, "Using VSwitch vsw-9 for the ECS instance.") {
		t.Fatalf("%d results; %v", n, types(r.Events))
	}
}

func TestResourceSelectionCancelled(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-resource-cancel"
	it := startSelection(t, e, th)
	md := it["metadata"].(map[string]any)
	taskID := md["requestTaskId"].(string)
	cancel := func(runID string, payload any) *response {
		entry := map[string]any{"interruptId": it["id"], "status": "cancelled"}
		if payload != nil {
			entry["payload"] = payload
		}
		return post(t, e.URL, resumeBody(e, th, runID, entry), nil)
	}
	// Only {"optionsEmpty": <bool>} may come with a cancellation (§5.8).
	for i, bad := range []any{map[string]any{"optionsEmpty": "yes"}, map[string]any{"optionsEmpty": true, "value": "vsw-1"}} {
		assertRunError(t, cancel("run-bad-"+randSuffix(), bad), "RESUME_PAYLOAD_INVALID", "The interrupt response payload is invalid.")
		if got := answerTexts(e, taskID); len(got) != 0 {
			t.Fatalf("case %d reached A2A: %q", i, got)
		}
	}
	r := cancel("run-2", map[string]any{"optionsEmpty": true})
	assertSuccess(t, r)
	assertBalanced(t, r.Events)
	want := map[string]any{"schemaVersion": 1.0, "kind": "cloud_resource_selection", "status": "canceled",
		"requestTaskId": taskID, "contextId": md["contextId"], "inputId": it["id"], "toolUseId": "toolu_demo_select",
		"selectorId": "vswitch", "optionsEmpty": true}
	if got := selectionAnswers(t, e, taskID); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("A2A answers %v, want %v", got, want)
	}
	if !strings.Contains(r.Raw, "No VSwitch was chosen: none is available in cn-hangzhou.") {
		t.Fatalf("continuation missing:\n%s", r.Raw)
	}
	// A cancelled selection does not cancel the task (unlike other kinds).
	for _, c := range e.Agent.Calls() {
		if c.Method == "CancelTask" {
			t.Fatal("a cancelled resource selection must not cancel the A2A task")
		}
	}
}

const deploySchema = `{"oneOf":[` +
	`{"additionalProperties":false,"properties":{"parameter_overrides":{"type":"object"},"selectedId":{"const":"confirm","title":"Deploy now","type":"string"}},"required":["selectedId"],"type":"object"},` +
	`{"additionalProperties":false,"properties":{"parameter_overrides":{"type":"object"},"selectedId":{"const":"adjust","title":"Adjust parameters","type":"string"}},"required":["selectedId"],"type":"object"},` +
	`{"additionalProperties":false,"properties":{"parameter_overrides":{"type":"object"},"selectedId":{"const":"cancel","title":"Cancel","type":"string"}},"required":["selectedId"],"type":"object"},` +
	`{"additionalProperties":false,"properties":{"action":{"enum":["adjust","cancel","confirm"],"type":"string"},"parameter_overrides":{"type":"object"}},"required":["action"],"type":"object"}]}`

func startDeploy(t *testing.T, e *env, th string) map[string]any {
	t.Helper()
	r := post(t, e.URL, e.body(th, "run-1", "deploy the VPC", map[string]any{"runMode": "pipeline"}), nil)
	its := interrupts(t, r)
	if len(its) != 1 {
		t.Fatalf("interrupts %v", its)
	}
	assertBalanced(t, r.Events)
	return its[0]
}

func deployResume(e *env, th, runID string, entry map[string]any) map[string]any {
	b := resumeBody(e, th, runID, entry)
	b["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["runMode"] = "pipeline"
	return b
}

func TestDeploymentConfirmation(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-deploy"
	it := startDeploy(t, e, th)
	md := it["metadata"].(map[string]any)
	schema, _ := json.Marshal(it["responseSchema"])
	if it["reason"] != "input_required" || string(schema) != deploySchema ||
		it["message"] != "Deploy stack demo-vpc to cn-hangzhou?\n- confirm: Deploy now\n- adjust: Adjust parameters\n- cancel: Cancel" {
		t.Fatalf("interrupt %v\nschema %s", it, schema)
	}
	if _, has := it["toolCallId"]; has {
		t.Fatalf("a confirmation without toolUseId has no toolCallId: %v", it)
	}
	if md["kind"] != "deployment_confirmation" || md["deploymentSummary"].(map[string]any)["stackName"] != "demo-vpc" {
		t.Fatalf("metadata %v", md)
	}
	taskID := md["requestTaskId"].(string)
	assertRunError(t, post(t, e.URL, deployResume(e, th, "run-2", resolve(it["id"], map[string]any{"selectedId": "deploy"})), nil),
		"RESUME_PAYLOAD_INVALID", "The interrupt response payload is invalid.")
	assertRunError(t, post(t, e.URL, deployResume(e, th, "run-3", resolve(it["id"], map[string]any{"action": "reselect"})), nil),
		"RESUME_PAYLOAD_INVALID", "The interrupt response payload is invalid.")

	// adjust with overrides: the agent asks again with the new parameters.
	r := post(t, e.URL, deployResume(e, th, "run-4", resolve(it["id"], map[string]any{"action": "adjust",
		"parameter_overrides": map[string]any{"InstanceType": "ecs.g7.xlarge"}})), nil)
	assertBalanced(t, r.Events)
	next := interrupts(t, r)
	params := next[0]["metadata"].(map[string]any)["deploymentSummary"].(map[string]any)["parameters"].(map[string]any)
	if len(next) != 1 || next[0]["id"] == it["id"] || params["InstanceType"] != "ecs.g7.xlarge" {
		t.Fatalf("after adjust: %v", next)
	}

	r = post(t, e.URL, deployResume(e, th, "run-5", resolve(next[0]["id"], map[string]any{"selectedId": "confirm"})), nil)
	assertSuccess(t, r)
	assertBalanced(t, r.Events)
	wantSent := []string{`{"action":"adjust","parameter_overrides":{"InstanceType":"ecs.g7.xlarge"}}`, "Deploy now"}
	if got := answerTexts(e, taskID); !reflect.DeepEqual(got, wantSent) {
		t.Fatalf("A2A answers %q, want %q", got, wantSent)
	}
	if !strings.Contains(r.Raw, "CREATE_COMPLETE") {
		t.Fatalf("the deployment progress is missing: %v", types(r.Events))
	}
}

func TestDeploymentConfirmationCancelAction(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-deploy-cancel"
	it := startDeploy(t, e, th)
	taskID := it["metadata"].(map[string]any)["requestTaskId"].(string)
	r := post(t, e.URL, deployResume(e, th, "run-2", resolve(it["id"], map[string]any{"action": "cancel"})), nil)
	// The agent ends the pipeline CANCELED (protocol.md §4.4 step 7).
	assertRunError(t, r, "CANCELLED", "The execution was cancelled.")
	if got := answerTexts(e, taskID); !reflect.DeepEqual(got, []string{`{"action":"cancel","parameter_overrides":null}`}) {
		t.Fatalf("A2A answers %q", got)
	}
}
