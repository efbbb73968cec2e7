package demoagent

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
)

// Cloud resource selection (upstream.md §4.7, protocol.md §5.8): a
// normal-mode turn parks on a cloud_resource_selection input; the answer is
// a text message made of resourcePrefix and a compact JSON selection.

// resourcePrefix starts a selection answer. iac-code's constant is not
// public; this is the adapter's choice (docs/decisions.md), mirrored here.
const resourcePrefix = "[iac-code:cloud_resource_selection] "

const (
	resourceToolUseID = "toolu_demo_select"
	resourceSelector  = "vswitch"

	errResShape    = "Resource selection responses must be the cloud_resource_selection prefix followed by a JSON object."
	errResFields   = "Resource selection response fields do not match schemaVersion 1."
	errResStatus   = "Resource selection status must be selected or canceled."
	errResValue    = "Resource selection value is not a valid VSwitch id."
	errResMismatch = "input_response_mismatch: resource selection correlation does not match."
)

// resourceKeys are the keys a selection answer may carry (protocol.md §5.8).
var resourceKeys = map[string]bool{
	"schemaVersion": true, "kind": true, "status": true, "requestTaskId": true, "contextId": true,
	"inputId": true, "toolUseId": true, "selectorId": true, "value": true, "label": true,
	"source": true, "optionsEmpty": true,
}

// vswitchID is what the demo's VSwitch selector profile accepts.
var vswitchID = regexp.MustCompile(`^vsw-[0-9a-z]{1,32}$`)

// resourceAnswer is a validated selection answer.
type resourceAnswer struct {
	status       string // selected | canceled
	value, label string
	source       string
	optionsEmpty bool
}

// resourceCorr is the correlation an answer must repeat.
type resourceCorr struct{ taskID, contextID, inputID, toolUseID string }

// parseResourceAnswer validates a selection answer text against the wait.
func parseResourceAnswer(text string, c resourceCorr) (resourceAnswer, *rpcError) {
	var a resourceAnswer
	body, ok := strings.CutPrefix(text, resourcePrefix)
	if !ok {
		return a, newRPCError(codeParams, errResShape)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil || dec.More() {
		return a, newRPCError(codeParams, errResShape)
	}
	for k := range m {
		if !resourceKeys[k] {
			return a, newRPCError(codeParams, errResFields)
		}
	}
	if n, ok := m["schemaVersion"].(json.Number); !ok || n.String() != "1" || m["kind"] != "cloud_resource_selection" {
		return a, newRPCError(codeParams, errResFields)
	}
	str := func(k string) (string, bool) {
		v, present := m[k]
		s, isStr := v.(string)
		return s, !present || isStr
	}
	var fields [7]string
	for i, k := range []string{"requestTaskId", "contextId", "inputId", "toolUseId", "selectorId", "label", "source"} {
		s, ok := str(k)
		if !ok {
			return a, newRPCError(codeParams, errResFields)
		}
		fields[i] = s
	}
	reqTask, ctxID, inputID, toolUseID, selectorID := fields[0], fields[1], fields[2], fields[3], fields[4]
	if inputID != c.inputID || toolUseID != c.toolUseID ||
		(reqTask != "" && reqTask != c.taskID) || (ctxID != "" && ctxID != c.contextID) ||
		(selectorID != "" && selectorID != resourceSelector) {
		return a, newRPCError(codeParams, errResMismatch)
	}
	if v, present := m["optionsEmpty"]; present {
		b, ok := v.(bool)
		if !ok {
			return a, newRPCError(codeParams, errResFields)
		}
		a.optionsEmpty = b
	}
	a.status, _ = m["status"].(string)
	switch a.status {
	case "canceled":
		if _, has := m["value"]; has {
			return a, newRPCError(codeParams, errResFields)
		}
		return a, nil
	case "selected":
	default:
		return a, newRPCError(codeParams, errResStatus)
	}
	value, ok := m["value"].(string)
	if !ok || !vswitchID.MatchString(value) {
		return a, newRPCError(codeParams, errResValue)
	}
	a.value, a.label, a.source = value, fields[5], fields[6]
	if a.label == "" {
		a.label = value
	}
	return a, nil
}

// resourceProjection is the input the turn parks on.
func (e *emitter) resourceProjection(inputID string) map[string]any {
	return map[string]any{
		"schemaVersion": 1, "kind": "cloud_resource_selection", "requestTaskId": e.tid, "contextId": e.cid,
		"inputId": inputID, "toolUseId": resourceToolUseID, "toolName": "select_resource",
		"title": tr(e.lang, msgResTitle), "purpose": tr(e.lang, msgResPurpose),
		"prompt": tr(e.lang, msgResPrompt), "required": true, "language": e.lang,
		"allowFreeText": true, "freeTextPrompt": tr(e.lang, msgResFree),
		"selector": map[string]any{"id": resourceSelector, "resourceType": "ALIYUN::ECS::VSwitch", "regionId": "cn-hangzhou",
			"associationProperty": "ALIYUN::VPC::VSwitch::VSwitchId", "associationPropertyMetadata": map[string]any{"VpcId": "vpc-demo"}},
		"options": []any{
			map[string]any{"id": "vsw-1", "label": "vsw-1 (cn-hangzhou-h)"},
			map[string]any{"id": "vsw-2", "label": "vsw-2 (cn-hangzhou-i)"},
		},
	}
}

// resourceSelection asks for a VSwitch and parks the task: the executor
// returns, so the stream ends on INPUT_REQUIRED with the input.
func (e *emitter) resourceSelection() error {
	if err := e.begin(); err != nil {
		return err
	}
	if err := e.text(tr(e.lang, msgResIntro)); err != nil {
		return err
	}
	if err := e.tool(map[string]any{"status": "started", "toolUseId": resourceToolUseID, "name": "select_resource"}); err != nil {
		return err
	}
	if err := e.tool(map[string]any{"status": "input_complete", "toolUseId": resourceToolUseID, "name": "select_resource",
		"inputSummary": map[string]any{"tool_name": "select_resource", "fields": map[string]any{"resourceType": "string", "regionId": "string"}}}); err != nil {
		return err
	}
	corr := resourceCorr{taskID: e.tid, contextID: e.cid, inputID: "resource-" + hex32(), toolUseID: resourceToolUseID}
	w := &textWait{kind: "cloud_resource_selection", inputID: corr.inputID,
		check: func(ans string) *rpcError {
			_, err := parseResourceAnswer(ans, corr)
			return err
		},
		resume: func(_ context.Context, e2 *emitter, ans string) error {
			a, err := parseResourceAnswer(ans, corr)
			if err != nil { // check ran first; kept so resume never trusts its input
				return err
			}
			return e2.resourceChosen(corr, a)
		}}
	// Parked, not pipeline-waiting: only an answer naming the task resumes it.
	e.a.mu.Lock()
	e.t.wait = w
	e.a.mu.Unlock()
	return e.status(stateInputRequired, nil, e.sess(map[string]any{"input": pbify(e.resourceProjection(corr.inputID))}), true)
}

// resourceChosen continues the turn after an accepted answer.
func (e *emitter) resourceChosen(c resourceCorr, a resourceAnswer) error {
	if err := e.status(stateWorking, nil, map[string]any{"inputReceived": map[string]any{
		"kind": "cloud_resource_selection", "inputId": c.inputID, "toolUseId": c.toolUseID, "status": a.status}}, true); err != nil {
		return err
	}
	res := map[string]any{"status": "completed", "toolUseId": c.toolUseID, "name": "select_resource",
		"result": map[string]any{"selectorId": resourceSelector, "value": a.value, "label": a.label, "source": a.source}}
	reply := trf(e.lang, msgResUsing, a.label)
	if a.status == "canceled" {
		res = map[string]any{"status": "failed", "toolUseId": c.toolUseID, "name": "select_resource",
			"result": "Resource selection cancelled by the user."}
		reply = tr(e.lang, msgResNone)
		if a.optionsEmpty {
			reply = tr(e.lang, msgResNoneAvailable)
		}
	}
	if err := e.tool(res); err != nil {
		return err
	}
	if err := e.text(reply); err != nil {
		return err
	}
	if err := e.usage(700, 80); err != nil {
		return err
	}
	return e.finish(reply)
}
