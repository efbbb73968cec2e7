package demoagent

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// selectionText is the answer the adapter sends for a resource selection.
func selectionText(fields map[string]any) string {
	b, _ := json.Marshal(fields)
	return resourcePrefix + string(b)
}

func selected(tid, cid, inputID string) map[string]any {
	return map[string]any{"schemaVersion": 1, "kind": "cloud_resource_selection", "status": "selected",
		"requestTaskId": tid, "contextId": cid, "inputId": inputID, "toolUseId": "toolu_demo_select",
		"selectorId": "vswitch", "value": "vsw-2", "label": "vsw-2 (cn-hangzhou-i)", "source": "option"}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// startResource runs the "resource" turn and returns the task and input.
func startResource(t *testing.T, h *harness, cid string) (string, map[string]any) {
	t.Helper()
	evs := h.stream("SendStreamingMessage", msgParams("Select a VSwitch for the web server", cid, "", cwdMeta("/w"))).all()
	last := evs[len(evs)-1]
	tid := taskIDOf(evs)
	in, _ := iacOf(last)["input"].(map[string]any)
	if stateOf(last) != stateInputRequired || in == nil {
		t.Fatalf("no input on the last frame %s", last.raw)
	}
	if !strings.Contains(last.raw, `"schemaVersion":1.0`) || iacOf(last)["iacCodeSessionId"] == nil {
		t.Fatalf("input frame lacks the double or the session id: %s", last.raw)
	}
	return tid, in
}

func TestResourceSelectionFlow(t *testing.T) {
	h := newHarness(t, Options{})
	tid, in := startResource(t, h, "ctx-rs")
	inputID, _ := in["inputId"].(string)
	if !regexp.MustCompile(`^resource-[0-9a-f]{32}$`).MatchString(inputID) {
		t.Fatalf("inputId %q", inputID)
	}
	want := map[string]any{"kind": "cloud_resource_selection", "requestTaskId": tid, "contextId": "ctx-rs",
		"toolUseId": "toolu_demo_select", "toolName": "select_resource", "prompt": "Select the VSwitch for the ECS instance", "required": true}
	for k, v := range want {
		if in[k] != v {
			t.Errorf("input[%s] = %v, want %v", k, in[k], v)
		}
	}
	sel := in["selector"].(map[string]any)
	opts := in["options"].([]any)
	if sel["id"] != "vswitch" || sel["resourceType"] != "ALIYUN::ECS::VSwitch" || len(opts) != 2 ||
		opts[1].(map[string]any)["label"] != "vsw-2 (cn-hangzhou-i)" {
		t.Fatalf("selector %v options %v", sel, opts)
	}
	ok := selected(tid, "ctx-rs", inputID)
	refused := []struct{ text, msg string }{
		{"vsw-2", errResShape},
		{resourcePrefix + "{not json", errResShape},
		{selectionText(with(ok, "inputId", "resource-other")), errResMismatch},
		{selectionText(with(ok, "toolUseId", "toolu_other")), errResMismatch},
		{selectionText(with(ok, "status", "chosen")), errResStatus},
		{selectionText(with(ok, "value", "subnet-1")), errResValue},
		{selectionText(with(ok, "extra", true)), errResFields},
	}
	for _, c := range refused {
		code, msg := errorOf(t, h.call("SendStreamingMessage", msgParams(c.text, "ctx-rs", tid, cwdMeta("/w"))))
		if code != -32602 || msg != c.msg {
			t.Fatalf("%q: %v %q, want -32602 %q", c.text, code, msg, c.msg)
		}
	}
	// Still parked after the refusals: the correct answer resumes the turn.
	evs := h.stream("SendStreamingMessage", msgParams(selectionText(ok), "ctx-rs", tid, cwdMeta("/w"))).all()
	if k, _ := result(evs[0]); k == "task" || taskIDOf(evs) != tid {
		t.Fatalf("answer started another task: %s", evs[0].raw)
	}
	got := iacOf(evs[0])["inputReceived"].(map[string]any)
	if !reflect.DeepEqual(got, map[string]any{"kind": "cloud_resource_selection", "inputId": inputID, "toolUseId": "toolu_demo_select", "status": "selected"}) {
		t.Fatalf("inputReceived %v", got)
	}
	tool := iacOf(evs[1])["tool"].(map[string]any)
	res, _ := tool["result"].(map[string]any)
	if tool["status"] != "completed" || tool["toolUseId"] != "toolu_demo_select" || res["value"] != "vsw-2" || res["label"] != "vsw-2 (cn-hangzhou-i)" {
		t.Fatalf("tool %v", tool)
	}
	if _, text := textOf(evs[2]); text != "Using VSwitch vsw-2 (cn-hangzhou-i) for the ECS instance." {
		t.Fatalf("reply %q", text)
	}
	last := evs[len(evs)-1]
	if stateOf(last) != stateInputRequired || iacOf(last)["input"] != nil {
		t.Fatalf("end of turn %s", last.raw)
	}
}

func TestResourceSelectionCanceled(t *testing.T) {
	h := newHarness(t, Options{})
	tid, in := startResource(t, h, "ctx-rc")
	ans := map[string]any{"schemaVersion": 1, "kind": "cloud_resource_selection", "status": "canceled", "requestTaskId": tid,
		"contextId": "ctx-rc", "inputId": in["inputId"], "toolUseId": "toolu_demo_select", "selectorId": "vswitch", "optionsEmpty": true}
	evs := h.stream("SendStreamingMessage", msgParams(selectionText(ans), "ctx-rc", tid, cwdMeta("/w"))).all()
	if iacOf(evs[0])["inputReceived"].(map[string]any)["status"] != "canceled" {
		t.Fatalf("inputReceived %s", evs[0].raw)
	}
	tool := iacOf(evs[1])["tool"].(map[string]any)
	if tool["status"] != "failed" || tool["result"] != "Resource selection cancelled by the user." {
		t.Fatalf("tool %v", tool)
	}
	if _, text := textOf(evs[2]); text != "No VSwitch was chosen: none is available in cn-hangzhou." {
		t.Fatalf("reply %q", text)
	}
	if stateOf(evs[len(evs)-1]) != stateInputRequired {
		t.Fatalf("end %s", evs[len(evs)-1].raw)
	}
}

func TestParseResourceAnswer(t *testing.T) {
	c := resourceCorr{taskID: "T", contextID: "C", inputID: "resource-1", toolUseID: "toolu_demo_select"}
	base := map[string]any{"schemaVersion": 1, "kind": "cloud_resource_selection", "inputId": "resource-1", "toolUseId": "toolu_demo_select"}
	cases := []struct {
		name string
		text string
		want resourceAnswer
		err  string
	}{
		{"free text keeps value as label", selectionText(with(base, "status", "selected", "value", "vsw-9", "source", "free_text")),
			resourceAnswer{status: "selected", value: "vsw-9", label: "vsw-9", source: "free_text"}, ""},
		{"canceled bare", selectionText(with(base, "status", "canceled")), resourceAnswer{status: "canceled"}, ""},
		{"canceled options empty", selectionText(with(base, "status", "canceled", "optionsEmpty", true)), resourceAnswer{status: "canceled", optionsEmpty: true}, ""},
		{"schemaVersion 1.0", strings.Replace(selectionText(with(base, "status", "canceled")), `"schemaVersion":1`, `"schemaVersion":1.0`, 1), resourceAnswer{}, errResFields},
		{"optionsEmpty not bool", selectionText(with(base, "status", "canceled", "optionsEmpty", "yes")), resourceAnswer{}, errResFields},
		{"canceled with value", selectionText(with(base, "status", "canceled", "value", "vsw-1")), resourceAnswer{}, errResFields},
		{"wrong kind", selectionText(with(base, "kind", "permission", "status", "canceled")), resourceAnswer{}, errResFields},
		{"other task", selectionText(with(base, "status", "canceled", "requestTaskId", "T2")), resourceAnswer{}, errResMismatch},
		{"other context", selectionText(with(base, "status", "canceled", "contextId", "C2")), resourceAnswer{}, errResMismatch},
		{"other selector", selectionText(with(base, "status", "canceled", "selectorId", "vpc")), resourceAnswer{}, errResMismatch},
		{"label not string", selectionText(with(base, "status", "selected", "value", "vsw-1", "label", 3)), resourceAnswer{}, errResFields},
		{"trailing data", selectionText(with(base, "status", "canceled")) + " {}", resourceAnswer{}, errResShape},
		{"array", resourcePrefix + "[]", resourceAnswer{}, errResShape},
		{"no value", selectionText(with(base, "status", "selected")), resourceAnswer{}, errResValue},
	}
	for _, tc := range cases {
		got, err := parseResourceAnswer(tc.text, c)
		msg := ""
		if err != nil {
			if err.Code != codeParams {
				t.Errorf("%s: code %d", tc.name, err.Code)
			}
			msg = err.Message
		}
		if msg != tc.err || (tc.err == "" && got != tc.want) {
			t.Errorf("%s: got %+v %q, want %+v %q", tc.name, got, msg, tc.want, tc.err)
		}
	}
}

// startDeploy runs the "deploy" pipeline up to its confirmation.
func startDeploy(t *testing.T, h *harness, cid string) string {
	t.Helper()
	evs := h.stream("SendStreamingMessage", msgParams("deploy the VPC", cid, "", cwdMeta("/w"))).all()
	deployInput(t, evs[len(evs)-1])
	return taskIDOf(evs)
}

func deployInput(t *testing.T, ev sseEvent) (map[string]any, map[string]any) {
	t.Helper()
	in, _ := iacOf(ev)["input"].(map[string]any)
	envs := envelopes(ev)
	if stateOf(ev) != stateInputRequired || in == nil || len(envs) != 1 || envs[0]["eventType"] != "input_required" {
		t.Fatalf("not a confirmation frame: %s", ev.raw)
	}
	if in["inputId"] != "input-"+envs[0]["eventId"].(string) || in["kind"] != "deployment_confirmation" {
		t.Fatalf("input %v", in)
	}
	return in, envs[0]
}

func TestDeploymentConfirmationFlow(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("deploy the VPC", "ctx-dep", "", cwdMeta("/w"))).all()
	tid := taskIDOf(evs)
	if got := eventTypes(evs); !reflect.DeepEqual(got, []string{"pipeline_started", "step_started", "input_required"}) {
		t.Fatalf("events %v", got)
	}
	in, _ := deployInput(t, evs[len(evs)-1])
	wantOpts := []any{
		map[string]any{"id": "confirm", "label": "Deploy now", "action": "confirm"},
		map[string]any{"id": "adjust", "label": "Adjust parameters", "action": "adjust"},
		map[string]any{"id": "cancel", "label": "Cancel", "action": "cancel"},
	}
	sum := in["deploymentSummary"].(map[string]any)
	if !reflect.DeepEqual(in["options"], wantOpts) || in["requestTaskId"] != tid || sum["stackName"] != "demo-vpc" || sum["region"] != "cn-hangzhou" {
		t.Fatalf("input %v", in)
	}
	// An unknown answer asks again with a validation error.
	again := h.stream("SendStreamingMessage", msgParams("maybe later", "ctx-dep", tid, cwdMeta("/w"))).all()
	in2, env := deployInput(t, again[len(again)-1])
	if env["data"].(map[string]any)["validation_error"] != "invalid_deployment_confirmation" || in2["inputId"] == in["inputId"] {
		t.Fatalf("re-ask %v", env)
	}
	// adjust applies the overrides to the summary and asks again.
	adj := h.stream("SendStreamingMessage", msgParams(`{"action":"adjust","parameter_overrides":{"InstanceType":"ecs.g7.xlarge"}}`, "ctx-dep", tid, cwdMeta("/w"))).all()
	rec := envelopes(adj[0])[0]
	d := rec["data"].(map[string]any)
	if rec["eventType"] != "input_received" || d["action"] != "adjust" || !reflect.DeepEqual(d["parameterOverrideKeys"], []any{"InstanceType"}) {
		t.Fatalf("input_received %v", rec)
	}
	in3, _ := deployInput(t, adj[len(adj)-1])
	sum3 := in3["deploymentSummary"].(map[string]any)
	if sum3["parameters"].(map[string]any)["InstanceType"] != "ecs.g7.xlarge" || sum3["resources"].([]any)[1].(map[string]any)["spec"] != "ecs.g7.xlarge" {
		t.Fatalf("summary after adjust %v", sum3)
	}
	// The label confirms, without a task id (the context's waiting task).
	done := h.stream("SendStreamingMessage", msgParams("Deploy now", "ctx-dep", "", cwdMeta("/w"))).all()
	if taskIDOf(done) != tid {
		t.Fatalf("confirmation went to %s", taskIDOf(done))
	}
	wantTypes := []string{"input_received", "step_completed", "step_started", "stack_progress", "stack_progress", "step_completed",
		"pipeline_completed", "backup_committed", "pipeline_handoff_ready", "backup_committed"}
	if got := eventTypes(done); !reflect.DeepEqual(got, wantTypes) {
		t.Fatalf("events %v", got)
	}
	stack := envelopes(done[2])[0]["data"].(map[string]any)
	if stack["status"] != "CREATE_COMPLETE" || stack["progressPercentage"] != 100.0 {
		t.Fatalf("stack %v", stack)
	}
	if stateOf(done[len(done)-1]) != stateCompleted {
		t.Fatalf("final %s", done[len(done)-1].raw)
	}
}

func TestDeploymentCancel(t *testing.T) {
	h := newHarness(t, Options{})
	tid := startDeploy(t, h, "ctx-dc")
	evs := h.stream("SendStreamingMessage", msgParams(`{"action":"cancel","parameter_overrides":null}`, "ctx-dc", tid, cwdMeta("/w"))).all()
	last := evs[len(evs)-1]
	envs := envelopes(last)
	end := envs[len(envs)-1]
	if stateOf(last) != stateCanceled || end["eventType"] != "pipeline_canceled" || end["status"] != "canceled" ||
		end["data"].(map[string]any)["source"] != "user" {
		t.Fatalf("cancel %s", last.raw)
	}
	if code, msg := errorOf(t, h.call("SendStreamingMessage", msgParams("Deploy now", "ctx-dc", tid, cwdMeta("/w")))); code != -32602 ||
		msg != "Task "+tid+" is in terminal state: 5" {
		t.Fatalf("after cancel: %v %q", code, msg)
	}
}

func TestDeployAction(t *testing.T) {
	cases := []struct {
		in        string
		action    string
		overrides map[string]any
		ok        bool
	}{
		{"confirm", "confirm", nil, true},
		{" Cancel ", "cancel", nil, true},
		{"Adjust parameters", "adjust", nil, true},
		{`{"action":"confirm"}`, "confirm", nil, true},
		{`{"action":"adjust","parameter_overrides":{"ZoneId":"cn-hangzhou-i","Count":2}}`, "adjust", map[string]any{"ZoneId": "cn-hangzhou-i", "Count": 2.0}, true},
		{`{"action":"reselect"}`, "", nil, false}, // not among the offered options
		{`{"action":"confirm","parameter_overrides":[1]}`, "", nil, false},
		{`{"action":"confirm","parameter_overrides":{"a":{"b":1}}}`, "", nil, false},
		{`{"action":`, "", nil, false},
		{"deploy now", "", nil, false},
	}
	for _, c := range cases {
		a, o, ok := deployAction(c.in)
		if a != c.action || ok != c.ok || !reflect.DeepEqual(o, c.overrides) {
			t.Errorf("%q → %q %v %v", c.in, a, o, ok)
		}
	}
}

func BenchmarkParseResourceAnswer(b *testing.B) {
	c := resourceCorr{taskID: "T", contextID: "C", inputID: "resource-1", toolUseID: "toolu_demo_select"}
	text := selectionText(selected("T", "C", "resource-1"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseResourceAnswer(text, c); err != nil {
			b.Fatal(err)
		}
	}
}
