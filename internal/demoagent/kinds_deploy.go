package demoagent

import (
	"encoding/json"
	"sort"
	"strings"
)

// Deployment confirmation (upstream.md §4.7): a pipeline step parks on
// a deployment_confirmation input; the text answer is an option id or label,
// or the adapter's JSON form {"action":…,"parameter_overrides":…}
// (docs/decisions.md).

const (
	deployConfirmStep = "confirm_deployment"
	deployStep        = "deploy"
	deployInvalid     = "invalid_deployment_confirmation"
)

// deployOptions are the choices offered; ids are unique and every action is
// one of confirm, adjust, reselect, cancel (protocol.md §5.2).
var deployOptions = []any{
	map[string]any{"id": "confirm", "label": "Deploy now", "action": "confirm"},
	map[string]any{"id": "adjust", "label": "Adjust parameters", "action": "adjust"},
	map[string]any{"id": "cancel", "label": "Cancel", "action": "cancel"},
}

// deployParams are the stack parameters before any override.
func deployParams() map[string]any {
	return map[string]any{"InstanceType": "ecs.g7.large", "ZoneId": "cn-hangzhou-h"}
}

// deployAction reads an answer: the JSON form, else an option id or label.
// Overrides must be an object of scalar values.
func deployAction(ans string) (action string, overrides map[string]any, ok bool) {
	a := strings.TrimSpace(ans)
	if strings.HasPrefix(a, "{") {
		var p struct {
			Action    string          `json:"action"`
			Overrides json.RawMessage `json:"parameter_overrides"`
		}
		if json.Unmarshal([]byte(a), &p) != nil || !offered(p.Action) {
			return "", nil, false
		}
		if len(p.Overrides) > 0 && string(p.Overrides) != "null" {
			if json.Unmarshal(p.Overrides, &overrides) != nil || overrides == nil {
				return "", nil, false
			}
			for _, v := range overrides {
				switch v.(type) {
				case string, float64, bool:
				default:
					return "", nil, false
				}
			}
		}
		return p.Action, overrides, true
	}
	for _, o := range deployOptions {
		om := o.(map[string]any)
		if a == om["id"] || a == om["label"] {
			return om["action"].(string), nil, true
		}
	}
	return "", nil, false
}

func offered(action string) bool {
	for _, o := range deployOptions {
		if o.(map[string]any)["action"] == action {
			return true
		}
	}
	return false
}

// deploymentSummary is the §4.1 summary for the current parameters.
func deploymentSummary(params map[string]any) map[string]any {
	return map[string]any{
		"candidateName": "Plan A: single zone", "action": "create", "region": "cn-hangzhou",
		"stackName": "demo-vpc", "template": "vpc.yaml", "totalMonthlyCost": "¥120",
		"parameters": params,
		"resources": []any{
			map[string]any{"name": "Vpc", "spec": "192.168.0.0/16", "monthlyCost": "¥0"},
			map[string]any{"name": "EcsInstance", "spec": params["InstanceType"], "monthlyCost": "¥120"},
		},
	}
}

// deployment runs the confirmation step of a two-step pipeline.
func (e *emitter) deployment() error {
	if err := e.pipe(e.pipelineStart(deployConfirmStep, deployStep), e.stepStarted(deployConfirmStep, 1, 2)); err != nil {
		return err
	}
	return e.askDeployment(deployParams(), "")
}

// askDeployment parks on a confirmation; validation names why the previous
// answer was refused.
func (e *emitter) askDeployment(params map[string]any, validation string) error {
	eventID := "evt-" + hex32()
	inputID := "input-" + eventID
	prompt := tr(e.lang, msgDeployPrompt)
	summary := deploymentSummary(params)
	proj := map[string]any{"schemaVersion": 1, "kind": "deployment_confirmation", "requestTaskId": e.tid, "contextId": e.cid,
		"inputId": inputID, "title": tr(e.lang, msgDeployTitle), "prompt": prompt, "required": true, "language": e.lang,
		"options": deployOptions, "deploymentSummary": summary}
	data := map[string]any{"kind": "deployment_confirmation", "stepId": deployConfirmStep, "prompt": prompt,
		"options": deployOptions, "deploymentSummary": summary}
	if validation != "" {
		data["validation_error"] = validation
	}
	env := e.envelopeID(eventID, "input_required", "step", "input_required", data,
		map[string]any{"input": proj, "step": stepCoord(deployConfirmStep, 1, 2)})
	e.park(waitSpec{Kind: "deployment_confirmation", InputID: inputID, Params: params})
	return e.pipeWith(proj, env)
}

// deployAnswered continues after an answer: confirm deploys, adjust asks
// again with the overrides applied, cancel ends the pipeline CANCELED, and
// anything else asks again with a validation error.
func (e *emitter) deployAnswered(params map[string]any, ans string) error {
	action, overrides, ok := deployAction(ans)
	if !ok {
		return e.askDeployment(params, deployInvalid)
	}
	keys := make([]any, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].(string) < keys[j].(string) })
	got := e.envelope("input_received", "step", "working", map[string]any{"kind": "deployment_confirmation",
		"action": action, "answerTextLength": len([]rune(ans)), "parameterOverrideKeys": keys},
		map[string]any{"step": stepCoord(deployConfirmStep, 1, 2)})
	switch action {
	case "cancel":
		end := e.envelope("pipeline_canceled", "pipeline", "canceled", map[string]any{"source": "user",
			"reason": "Deployment cancelled by the user."}, nil)
		return e.pipe(got, end)
	case "adjust":
		next := make(map[string]any, len(params)+len(overrides))
		for k, v := range params {
			next[k] = v
		}
		for k, v := range overrides {
			next[k] = v
		}
		if err := e.pipe(got); err != nil {
			return err
		}
		return e.askDeployment(next, "")
	}
	return e.deployStack(got)
}

// deployStack reports the stack creation and completes the pipeline.
func (e *emitter) deployStack(got map[string]any) error {
	if err := e.pipe(got, e.stepCompleted(deployConfirmStep, 1, 2), e.stepStarted(deployStep, 2, 2)); err != nil {
		return err
	}
	step := map[string]any{"step": stepCoord(deployStep, 2, 2)}
	for _, p := range []struct {
		status  string
		percent int
	}{{"CREATE_IN_PROGRESS", 50}, {"CREATE_COMPLETE", 100}} {
		env := e.envelope("stack_progress", "stack", "working", map[string]any{"toolUseId": "toolu_pipe_stack", "stackId": "stack-demo",
			"stackName": "demo-vpc", "status": p.status, "progressPercentage": p.percent, "resources": []any{}, "elapsedSeconds": p.percent / 10}, step)
		if err := e.pipe(env); err != nil {
			return err
		}
	}
	if err := e.pipe(e.stepCompleted(deployStep, 2, 2)); err != nil {
		return err
	}
	return e.complete(2)
}
