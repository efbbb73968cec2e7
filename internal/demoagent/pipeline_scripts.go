package demoagent

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

func (e *emitter) pipelineStart(steps ...string) map[string]any {
	names := make([]any, len(steps))
	for i, s := range steps {
		names[i] = s
	}
	return e.envelope("pipeline_started", "pipeline", "working", map[string]any{"pipelineType": e.pipeName(),
		"totalSteps": len(steps), "stepNames": names}, nil)
}

// The scripted question (upstream.md §4.3).
const (
	questionToolUse = "toolu_demo_ask"
)

var questionOptions = []any{map[string]any{"id": "vpc", "label": "VPC only"}, map[string]any{"id": "vpc_ecs", "label": "VPC with ECS"}}

// question parks on an ask_user_question (upstream.md §4.3).
func (e *emitter) question() error {
	if err := e.pipe(e.pipelineStart("requirements"), e.stepStarted("requirements", 1, 1)); err != nil {
		return err
	}
	const tu = questionToolUse
	opts := questionOptions
	prompt := tr(e.lang, msgQuestionPrompt)
	proj := map[string]any{"schemaVersion": 1, "kind": "ask_user_question", "requestTaskId": e.tid, "contextId": e.cid,
		"inputId": "ask-" + tu, "prompt": prompt, "required": true, "allowFreeText": true,
		"freeTextPrompt": tr(e.lang, msgQuestionFree), "options": opts}
	in := map[string]any{"toolUseId": tu}
	for k, v := range proj {
		in[k] = v
	}
	data := map[string]any{"kind": "ask_user_question", "inputId": "ask-" + tu, "toolUseId": tu, "question": prompt,
		"prompt": prompt, "options": opts, "allowFreeText": true, "freeTextPrompt": proj["freeTextPrompt"]}
	env := e.envelope("input_required", "step", "input_required", data, map[string]any{"input": in, "step": stepCoord("requirements", 1, 1)})
	e.park(waitSpec{Kind: "ask_user_question", InputID: "ask-" + tu})
	return e.pipeWith(proj, env)
}

// questionAnswered continues after the answer to the question.
func (e *emitter) questionAnswered(ans string) error {
	const tu = questionToolUse
	opts := questionOptions
	id, label, free := matchOption(ans, opts)
	d := map[string]any{"kind": "ask_user_question", "inputId": "ask-" + tu, "toolUseId": tu, "answerTextLength": len([]rune(ans)),
		"selectedId": id, "selectedLabel": label, "freeTextLength": len([]rune(free)), "question": tr(e.lang, msgQuestionPrompt), "options": opts, "allowFreeText": true}
	got := e.envelope("input_received", "step", "working", d, map[string]any{"step": stepCoord("requirements", 1, 1)})
	if err := e.pipe(got, e.stepCompleted("requirements", 1, 1)); err != nil {
		return err
	}
	return e.complete(1)
}

// matchOption applies the §4.3 order: 1-based index, id or label, free text.
func matchOption(ans string, opts []any) (id, label, free string) {
	a := strings.TrimSpace(ans)
	if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(opts) {
		o := opts[n-1].(map[string]any)
		return o["id"].(string), o["label"].(string), ""
	}
	for _, x := range opts {
		o := x.(map[string]any)
		if a == o["id"] || a == o["label"] {
			return o["id"].(string), o["label"].(string), ""
		}
	}
	return "", "", a
}

var (
	hintPattern   = regexp.MustCompile(`(方案|候选|candidate|plan)\s*#?\s*(\d+)`)
	choicePattern = regexp.MustCompile(`^(我)?(要|选|选择)\s*(\d+)$`)
)

// selection parks on a candidate_selection (upstream.md §4.4).
func (e *emitter) selection() error {
	if err := e.pipe(e.pipelineStart("confirm_and_select"), e.stepStarted("confirm_and_select", 1, 1)); err != nil {
		return err
	}
	return e.askSelection("")
}

// selectionNames are the scripted candidate plans.
var selectionNames = []string{"Plan A: single zone", "Plan B: dual zone"}

// selectionOptions are the offered options; rich adds the presentation
// fields of candidatePresentation rich.
func selectionOptions(rich bool) []any {
	opts := make([]any, len(selectionNames))
	for i, n := range selectionNames {
		o := map[string]any{"id": itoa(i), "label": n}
		if rich {
			o["summary"], o["architectureDiagram"] = "VPC, vSwitch and ECS in "+itoa(i+1)+" zone(s)", "graph TD; VPC-->ECS"
			o["totalMonthlyCost"] = "¥" + itoa(120*(i+1))
			o["costItems"] = []any{map[string]any{"name": "ECS", "spec": "ecs.g7.large", "monthlyCost": "¥" + itoa(120*(i+1))}}
		}
		opts[i] = o
	}
	return opts
}

func (e *emitter) askSelection(validation string) error {
	opts := selectionOptions(e.rich)
	eventID := "evt-" + hex32()
	prompt := tr(e.lang, msgSelectPrompt)
	proj := map[string]any{"schemaVersion": 1, "kind": "candidate_selection", "requestTaskId": e.tid, "contextId": e.cid,
		"inputId": "input-" + eventID, "prompt": prompt, "required": true, "options": opts}
	data := map[string]any{"stepId": "confirm_and_select", "prompt": prompt, "options": opts}
	if validation != "" {
		data["validation_error"] = validation
	}
	env := e.envelopeID(eventID, "input_required", "step", "input_required", data,
		map[string]any{"input": proj, "step": stepCoord("confirm_and_select", 1, 1)})
	e.park(waitSpec{Kind: "candidate_selection", InputID: "input-" + eventID, Rich: e.rich})
	return e.pipeWith(proj, env)
}

// selectionAnswered continues after an answer to a selection offered with
// rich (or standard) options.
func (e *emitter) selectionAnswered(rich bool, ans string) error {
	idx, ok := pickCandidate(ans, selectionNames)
	if !ok {
		return e.askSelection("invalid_candidate_selection")
	}
	d := map[string]any{"userInputLength": len([]rune(ans)), "kind": "candidate_selection", "selectedValue": selectionNames[idx],
		"selectedIndex": idx, "selectedOption": selectionOptions(rich)[idx]}
	got := e.envelope("input_received", "step", "working", d, map[string]any{"step": stepCoord("confirm_and_select", 1, 1)})
	if err := e.pipe(got, e.stepCompleted("confirm_and_select", 1, 1)); err != nil {
		return err
	}
	return e.complete(1)
}

// pickCandidate reads a selection reply: JSON payload, hint ("plan 2",
// "方案2", 1-based) or an exact name.
func pickCandidate(ans string, names []string) (int, bool) {
	a := strings.TrimSpace(ans)
	if strings.HasPrefix(a, "{") {
		var p map[string]any
		if json.Unmarshal([]byte(a), &p) != nil {
			return 0, false
		}
		for _, k := range []string{"selected_evaluated_candidate_index", "selected_candidate_index"} {
			if f, ok := p[k].(float64); ok && f >= 0 && int(f) < len(names) && f == float64(int(f)) {
				return int(f), true
			}
		}
		if s, ok := p["selected_candidate_name"].(string); ok {
			for i, n := range names {
				if s == n {
					return i, true
				}
			}
		}
		return 0, false
	}
	m := hintPattern.FindStringSubmatch(strings.ToLower(a))
	if m == nil {
		if c := choicePattern.FindStringSubmatch(a); c != nil {
			m = []string{"", "", c[3]}
		}
	}
	if m != nil {
		n, _ := strconv.Atoi(m[2])
		if n >= 1 && n <= len(names) {
			return n - 1, true
		}
		return 0, false
	}
	for i, n := range names {
		if a == n {
			return i, true
		}
	}
	return 0, false
}
