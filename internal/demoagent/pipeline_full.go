package demoagent

// pipelineFull is the full scripted pipeline run (doc.go, "pipeline").
func (e *emitter) pipelineFull() error {
	s1 := func(x map[string]any) map[string]any {
		x["step"] = stepCoord("intent_parsing", 1, 2)
		return x
	}
	if err := e.pipe(e.pipelineStart("intent_parsing", "candidates"), e.stepStarted("intent_parsing", 1, 2)); err != nil {
		return err
	}
	msg := e.envelope("message_started", "step", "working", map[string]any{"messageId": "msg-intent"}, s1(map[string]any{}))
	first := e.envelope("text_delta", "step", "working", map[string]any{"text": "Analysing "}, s1(map[string]any{}))
	second := e.envelope("text_delta", "step", "working", map[string]any{"text": "requirements in " + e.cwd + "."}, s1(map[string]any{}))
	// Coalesced live delta: the first eventId with the last sequence.
	co := map[string]any{}
	for k, v := range first {
		co[k] = v
	}
	co["sequence"] = second["sequence"]
	co["data"] = map[string]any{"text": "Analysing requirements in " + e.cwd + "."}
	if err := e.pipe(msg, co); err != nil {
		return err
	}
	think := e.envelope("thinking_delta", "step", "working", map[string]any{"type": "raw_thinking", "text": "Two candidates fit."}, s1(map[string]any{}))
	ts := e.envelope("tool_started", "step", "working", map[string]any{"toolName": "read_file", "toolUseId": "toolu_pipe_read",
		"input": map[string]any{"path": e.cwd + "/requirements.md"}}, s1(map[string]any{}))
	tr := e.envelope("tool_result", "step", "working", map[string]any{"toolName": "read_file", "toolUseId": "toolu_pipe_read",
		"isError": false, "result": "2 vSwitches, 1 ECS"}, s1(map[string]any{}))
	use := e.envelope("usage", "step", "working", map[string]any{"provider": "demo", "model": "demo-model",
		"inputTokens": 800, "outputTokens": 90, "totalTokens": 890, "cachedInputTokens": 0}, s1(map[string]any{}))
	ctxUse := e.envelope("context_usage", "step", "working", map[string]any{"totalTokens": 890, "contextWindow": 128000, "usagePercent": 0.7}, nil)
	if err := e.pipe(think, ts, tr, use, ctxUse); err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		if err := e.pipe(e.envelope("pipeline_progress", "pipeline", "working", map[string]any{"percent": 10 * (i + 1)}, nil)); err != nil {
			return err
		}
	}
	done1 := e.stepCompleted("intent_parsing", 1, 2)
	// Journal-only envelope waiting for a backup: a sequence gap on the wire.
	hidden := e.envelope("pipeline_warning", "pipeline", "working", map[string]any{"message": "backup pending"}, nil)
	hidden["visibility"] = "pending_backup"
	if err := e.pipe(done1); err != nil {
		return err
	}
	if err := e.parallelCandidates(); err != nil {
		return err
	}
	return e.complete(2)
}

// parallelCandidates interleaves two candidates of the "candidates" step,
// repeating one eventId to exercise de-duplication.
func (e *emitter) parallelCandidates() error {
	step := stepCoord("candidates", 2, 2)
	if err := e.pipe(e.stepStarted("candidates", 2, 2)); err != nil {
		return err
	}
	names := []string{"single-zone", "dual-zone"}
	starts := make([]map[string]any, 2)
	for i, n := range names {
		starts[i] = e.envelope("candidate_started", "candidate", "working", map[string]any{"subPipelineId": "cand-" + itoa(i),
			"candidateIndex": i, "subPipelineName": n}, map[string]any{"step": step, "candidate": candCoord(i, n)})
	}
	if err := e.pipe(starts...); err != nil {
		return err
	}
	for _, sid := range []string{"template_generating", "validation"} {
		idx := 1
		if sid == "validation" {
			idx = 2
		}
		var batch []map[string]any
		for i, n := range names {
			co := map[string]any{"step": step, "candidate": candCoord(i, n), "candidateStep": candStepCoord(i, sid, idx)}
			batch = append(batch, e.envelope("candidate_step_started", "candidate_step", "working",
				map[string]any{"subPipelineId": "cand-" + itoa(i), "candidateIndex": i, "stepId": sid, "stepIndex": idx}, co))
		}
		for i, n := range names {
			co := map[string]any{"step": step, "candidate": candCoord(i, n), "candidateStep": candStepCoord(i, sid, idx)}
			batch = append(batch, e.envelope("text_delta", "candidate_step", "working", map[string]any{"text": n + ": " + sid + " done. "}, co))
		}
		for i, n := range names {
			co := map[string]any{"step": step, "candidate": candCoord(i, n), "candidateStep": candStepCoord(i, sid, idx)}
			batch = append(batch, e.envelope("candidate_step_completed", "candidate_step", "working",
				map[string]any{"subPipelineId": "cand-" + itoa(i), "candidateIndex": i, "stepId": sid, "conclusionField": sid, "conclusion": "ok"}, co))
		}
		if err := e.pipe(batch...); err != nil {
			return err
		}
	}
	stack := e.envelope("stack_progress", "stack", "working", map[string]any{"toolUseId": "toolu_pipe_stack", "stackId": "stack-demo",
		"stackName": "demo", "status": "CREATE_IN_PROGRESS", "progressPercentage": 50, "resources": []any{}, "elapsedSeconds": 3}, nil)
	var ends []map[string]any
	for i, n := range names {
		ends = append(ends, e.envelope("candidate_completed", "candidate", "working", map[string]any{"subPipelineId": "cand-" + itoa(i),
			"candidateIndex": i}, map[string]any{"step": step, "candidate": candCoord(i, n)}))
	}
	// starts[0] again: a duplicate eventId on the live stream.
	if err := e.pipe(append([]map[string]any{starts[0], stack}, ends...)...); err != nil {
		return err
	}
	return e.pipe(e.stepCompleted("candidates", 2, 2))
}

// pipelineParentPermission asks a parent-scope permission (§4.1) and keeps
// the stream open for the answer.
func (e *emitter) pipelineParentPermission() error {
	step := parentPermissionStep()
	if err := e.pipe(e.pipelineStart("deploy"), e.stepStarted("deploy", 1, 1)); err != nil {
		return err
	}
	const tu = "toolu_pipe_deploy"
	w := &permWait{inputID: "permission-" + hex32(), toolUseID: tu, decision: make(chan string, 1)}
	proj := e.permissionEnvelope(w.inputID, tu)
	perm := map[string]any{"permissionId": "perm-" + tu, "pending": true, "inputId": w.inputID}
	for _, k := range []string{"toolName", "toolUseId", "safeSummary", "prompt", "options", "language", "title", "purpose", "effect", "target", "isReadOnly"} {
		perm[k] = proj[k]
	}
	env := e.envelope("permission_requested", "step", "input_required", map[string]any{"toolName": "bash", "toolUseId": tu},
		map[string]any{"step": step, "permission": perm, "input": proj})
	e.a.mu.Lock()
	e.t.perm = w
	e.a.mu.Unlock()
	if err := e.pipeWith(proj, env); err != nil {
		return err
	}
	return e.afterPermission(w, step, false)
}

// parentPermissionStep is the step holding the parent-scope permission.
func parentPermissionStep() map[string]any { return stepCoord("deploy", 1, 1) }

// afterPermission waits, acknowledges and finishes a pipeline permission.
func (e *emitter) afterPermission(w *permWait, step map[string]any, sideband bool) error {
	d, err := e.awaitDecision(w)
	if err != nil {
		return err
	}
	if !sideband {
		if err := e.status(stateWorking, nil, map[string]any{"inputReceived": map[string]any{
			"kind": "permission", "inputId": w.inputID, "toolUseId": w.toolUseID, "decision": d}}, true); err != nil {
			return err
		}
		if err := e.awaitWatcher(w); err != nil {
			return err
		}
	}
	e.a.mu.Lock()
	e.t.pending = nil
	e.a.mu.Unlock()
	res := map[string]any{"kind": "permission", "permissionId": w.inputID, "inputId": w.inputID, "toolUseId": w.toolUseID,
		"toolName": "bash", "decision": d, "pending": false}
	resolved := e.envelope("permission_resolved", "pipeline", "working", res, map[string]any{"permission": res})
	tr := e.envelope("tool_result", "step", "working", map[string]any{"toolName": "bash", "toolUseId": w.toolUseID,
		"isError": d == "deny", "result": map[bool]string{true: "Permission denied by user.", false: e.cwd}[d == "deny"]},
		map[string]any{"step": step})
	if err := e.pipe(resolved, tr, e.stepCompleted(step["id"].(string), step["index"].(int), step["total"].(int))); err != nil {
		return err
	}
	return e.complete(1)
}

// pipelineSideband raises a candidate-scope permission: the task stays
// WORKING and the answer arrives through SendMessage (sideband).
func (e *emitter) pipelineSideband() error {
	step := stepCoord("candidates", 1, 1)
	if err := e.pipe(e.pipelineStart("candidates"), e.stepStarted("candidates", 1, 1)); err != nil {
		return err
	}
	cand := candCoord(1, "dual-zone")
	const tu = "toolu_cand_bash"
	w := &permWait{inputID: "permission-" + hex32(), toolUseID: tu, sideband: true, decision: make(chan string, 1)}
	proj := e.permissionEnvelope(w.inputID, tu)
	proj["scope"], proj["subPipelineId"] = "candidate", "cand-1"
	perm := map[string]any{"permissionId": w.inputID, "pending": true, "inputId": w.inputID, "toolName": "bash", "toolUseId": tu,
		"prompt": proj["prompt"], "options": proj["options"]}
	env := e.envelope("permission_requested", "candidate", "working", map[string]any{"toolName": "bash", "toolUseId": tu},
		map[string]any{"step": step, "candidate": cand, "permission": perm, "input": proj})
	e.a.mu.Lock()
	e.t.sideband[w.inputID] = w
	// pendingPermissions holds the permission envelopes of upstream.md
	// §4.1 (the projection with required: true), as the adapter reads them.
	e.t.pending = []any{pbify(proj)}
	e.a.mu.Unlock()
	if err := e.pipeWith(proj, env); err != nil {
		return err
	}
	other := e.envelope("candidate_step_started", "candidate_step", "working", map[string]any{"subPipelineId": "cand-0",
		"candidateIndex": 0, "stepId": "template_generating"}, map[string]any{"step": step, "candidate": candCoord(0, "single-zone"),
		"candidateStep": candStepCoord(0, "template_generating", 1)})
	if err := e.pipe(other); err != nil {
		return err
	}
	return e.afterPermission(w, step, true)
}
