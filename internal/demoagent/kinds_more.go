package demoagent

import (
	"context"
	"strings"

	"github.com/google/uuid"
)

// The rarer frames of iac-code (upstream.md §3.4.8, §4.5,
// §5.4), each selected by a keyword (doc.go) or, for cleanupOnly, by the
// metadata that selects it in iac-code.

const (
	mcpServer      = "aliyun-docs"
	backupBlockErr = "backup path is not writable"
)

// mcpWarning is the warning of an MCP server that did not start.
func (e *emitter) mcpWarning() map[string]any {
	return map[string]any{"serverName": mcpServer, "code": "startup_failed", "message": "connection refused",
		"source": "project", "sourcePath": strings.TrimSuffix(e.cwd, "/") + "/.iac-code/mcp.json", "severity": "warning"}
}

func (e *emitter) mcpStatus() map[string]any {
	return map[string]any{
		"servers": []any{
			map[string]any{"name": mcpServer, "status": "failed", "toolCount": num(0)},
			map[string]any{"name": "ros", "status": "connected", "toolCount": num(12)},
		},
		"warnings": []any{e.mcpWarning()},
	}
}

// mcpTurn is a normal turn whose MCP server failed to start: the
// mcpWarning frame with its "MCP warning: …" text, the mcpStatus frame,
// then a short answer.
func (e *emitter) mcpTurn() error {
	if err := e.begin(); err != nil {
		return err
	}
	warn := agentText(e.tid, e.cid, e.tid+"-mcp", "MCP warning: "+mcpServer+": connection refused")
	if err := e.status(stateWorking, warn, e.sess(map[string]any{"mcpWarning": e.mcpWarning()}), true); err != nil {
		return err
	}
	if err := e.status(stateWorking, nil, e.sess(map[string]any{"mcpStatus": e.mcpStatus()}), true); err != nil {
		return err
	}
	reply := tr(e.lang, msgMCPReply)
	if err := e.text(reply); err != nil {
		return err
	}
	return e.finish(reply)
}

// mcpPipeline reports the MCP status as a pipeline mcp_status envelope
// (no status: the frame stays WORKING), then runs one step to completion.
func (e *emitter) mcpPipeline() error {
	// Envelopes are built in sequence order.
	start := e.pipelineStart("intent_parsing")
	env := e.envelope("mcp_status", "pipeline", "", e.mcpStatus(), nil)
	if err := e.pipe(start, env, e.stepStarted("intent_parsing", 1, 1)); err != nil {
		return err
	}
	if err := e.pipe(e.stepCompleted("intent_parsing", 1, 1)); err != nil {
		return err
	}
	return e.complete(1)
}

// backupBlockedTurn: a normal turn whose terminal backup failed ends on
// INPUT_REQUIRED with the backup text and backupBlocked (upstream.md §3.4.8).
func (e *emitter) backupBlockedTurn() error {
	if err := e.begin(); err != nil {
		return err
	}
	if err := e.text(replyIntro(e.lang, "vpc.yaml", e.cwd)); err != nil {
		return err
	}
	return e.status(stateInputRequired, e.stateMsg(stateInputRequired, tr(e.lang, msgBackupBlocked)),
		e.sess(map[string]any{"backupBlocked": map[string]any{"reason": "terminal", "blockedTerminalState": "failed",
			"error": backupBlockErr, "recoverable": true}}), true)
}

// backupBlockedPipeline parks on a backup_blocked envelope (INPUT_REQUIRED
// without an input projection, upstream.md §4.5); any text continues from the journal.
func (e *emitter) backupBlockedPipeline() error {
	if err := e.pipe(e.pipelineStart("intent_parsing"), e.stepStarted("intent_parsing", 1, 1),
		e.stepCompleted("intent_parsing", 1, 1)); err != nil {
		return err
	}
	env := e.envelope("backup_blocked", "pipeline", "input_required", map[string]any{"reason": "pipeline_step_completed",
		"error": backupBlockErr, "recoverable": true}, nil)
	e.park(waitSpec{Kind: "backup_blocked", InputID: "backup-" + e.tid})
	return e.pipe(env)
}

// backupRetried continues a backup-blocked pipeline.
func (e *emitter) backupRetried() error {
	resumed := e.envelope("pipeline_resumed", "pipeline", "working", map[string]any{"reason": "backup_retry"}, nil)
	if err := e.pipe(resumed); err != nil {
		return err
	}
	return e.complete(1)
}

// The pause confirmation of a step with side effects (upstream.md §3.6).
const pauseStep = "deploy"

// pauseConfirmation parks on a pipeline_pause_confirmation: INPUT_REQUIRED
// with only the envelope, no input projection (upstream.md §4.5).
func (e *emitter) pauseConfirmation() error {
	env, err := e.pauseStart(false)
	if err != nil {
		return err
	}
	return e.pipe(env)
}

// pauseStart publishes the deploy step up to the confirmation, parks the
// task on it and returns the input_required envelope to publish.
func (e *emitter) pauseStart(handover bool) (map[string]any, error) {
	step := map[string]any{"step": stepCoord(pauseStep, 1, 1)}
	start, started := e.pipelineStart(pauseStep), e.stepStarted(pauseStep, 1, 1)
	progress := e.envelope("stack_progress", "stack", "working", map[string]any{"toolUseId": "toolu_pipe_stack", "stackId": "stack-demo",
		"stackName": "demo-vpc", "status": "CREATE_IN_PROGRESS", "progressPercentage": 40, "resources": []any{}, "elapsedSeconds": 4}, step)
	if err := e.pipe(start, started, progress); err != nil {
		return nil, err
	}
	prompt := tr(e.lang, msgPausePrompt)
	env := e.envelope("input_required", "step", "input_required", map[string]any{"kind": "pipeline_pause_confirmation",
		"stepId": pauseStep, "prompt": prompt, "reason": "interrupt_judge_failed", "paused": true, "options": []any{}}, step)
	e.park(waitSpec{Kind: "pipeline_pause_confirmation", InputID: "pause-" + e.tid, Handover: handover})
	return env, nil
}

// pauseAnswered: "cancel" (取消, annuler, …) cancels the pipeline; any
// other text continues the step. For the "hand over" pipeline
// (handover.go), input_received also lists the images of the answer, and
// the step says which guidance it applied.
func (e *emitter) pauseAnswered(ans string, handover bool) error {
	step := map[string]any{"step": stepCoord(pauseStep, 1, 1)}
	data := map[string]any{"kind": "pipeline_pause_confirmation", "userInputLength": len([]rune(ans))}
	if handover {
		data["images"] = append([]any{}, e.images...)
	}
	got := e.envelope("input_received", "step", "working", data, step)
	if isCancelWord(ans) {
		end := e.envelope("pipeline_canceled", "pipeline", "canceled", map[string]any{"source": "user",
			"reason": "Pipeline cancelled at the pause confirmation."}, nil)
		return e.pipe(got, end)
	}
	// Envelopes take their sequence when built: build them in the order
	// they are published.
	envs := []map[string]any{got}
	if handover {
		envs = append(envs, e.envelope("text_delta", "step", "working", map[string]any{"text": tr(e.lang, msgGuidanceApplied) + ans}, step))
	}
	done := e.envelope("stack_progress", "stack", "working", map[string]any{"toolUseId": "toolu_pipe_stack", "stackId": "stack-demo",
		"stackName": "demo-vpc", "status": "CREATE_COMPLETE", "progressPercentage": 100, "resources": []any{}, "elapsedSeconds": 9}, step)
	if err := e.pipe(append(envs, done, e.stepCompleted(pauseStep, 1, 1))...); err != nil {
		return err
	}
	return e.complete(1)
}

// isCancelWord reads a cancel instruction in the seven languages.
func isCancelWord(ans string) bool {
	a := strings.ToLower(ans)
	for _, w := range []string{"cancel", "取消", "cancelar", "annuler", "abbrechen", "キャンセル"} {
		if strings.Contains(a, w) {
			return true
		}
	}
	return false
}

// recoverableError is iac-code's answer to a message whose context's
// pipeline journal belongs to another task (upstream.md §5.4): -32602 with
// the task to resume in an object data.
func recoverableError(c *ctxRec) *rpcError {
	task := c.waitingTask
	if task == "" {
		task = c.activeTask
	}
	if task == "" {
		task = uuid.NewString()
	}
	return passthroughError(codeParams, "Pipeline already running. Resume task "+task+".",
		map[string]any{"recoverableTaskId": task, "contextId": c.id, "sidecarStatus": "running"})
}

// cleanupTurn drains the rollback cleanup after a pipeline-to-normal
// handoff (cleanupOnly, upstream.md §3.4.8): no answer, the cleanup
// envelopes of the handed-off pipeline delivered in this task, and the
// summary on the assistantFinal and INPUT_REQUIRED frames. Without a
// handoff the summary says unavailable.
func (e *emitter) cleanupTurn() error {
	if err := e.begin(); err != nil {
		return err
	}
	e.a.mu.Lock()
	from := ""
	if e.t.ctx != nil {
		from = e.t.ctx.handoffTask
	}
	e.a.mu.Unlock()
	summary := map[string]any{"requested": true, "status": "unavailable", "resourceCount": num(0), "resources": []any{}}
	if from != "" {
		res := map[string]any{"provider": "ros", "resourceType": "ALIYUN::ROS::Stack", "resourceId": "stack-demo",
			"resourceName": "demo-vpc", "regionId": "cn-hangzhou", "sourceStepId": "deploy", "cleanupStatus": "deleted",
			"progressStatus": "completed"}
		ids := map[string]any{"taskId": from, "pipelineRunId": "pipeline-run-" + from, "deliveryTaskId": e.tid, "deliveryContextId": e.cid}
		var envs []map[string]any
		for _, ev := range []struct {
			typ  string
			data map[string]any
		}{
			{"cleanup_started", map[string]any{"status": "running", "resourceCount": 1}},
			{"cleanup_progress", map[string]any{"status": "running", "resourceId": "stack-demo", "progressStatus": "deleting",
				"progressPercentage": 50, "stackStatus": "DELETE_IN_PROGRESS"}},
			{"cleanup_completed", map[string]any{"status": "completed", "resourceCount": 1}},
		} {
			envs = append(envs, e.envelope(ev.typ, "cleanup", "working", ev.data, ids))
		}
		if err := e.pipe(envs...); err != nil {
			return err
		}
		summary = map[string]any{"requested": true, "status": "completed", "resourceCount": num(1), "resources": []any{pbify(res)}}
	}
	if err := e.status(stateWorking, nil, e.sess(map[string]any{"assistantFinal": map[string]any{"complete": true},
		"cleanupOnly": summary}), true); err != nil {
		return err
	}
	return e.status(stateInputRequired, nil, e.sess(map[string]any{"cleanupOnly": summary}), true)
}

// cleanupRefusal refuses a cleanup-only turn in pipeline mode on a context
// without a completed handoff, as iac-code does.
func cleanupRefusal(pipeline bool) func(c *ctxRec) *rpcError {
	return func(c *ctxRec) *rpcError {
		if pipeline && c.handoffTask == "" {
			return newRPCError(codeParams, "Cleanup-only continuation requires a completed Pipeline handoff.")
		}
		return nil
	}
}

// cleanupOnly reports whether the request asks for a cleanup-only turn.
func cleanupOnly(iac map[string]any) bool {
	b, _ := iac["cleanupOnly"].(bool)
	return b
}

// morePickScenario selects the scenarios of this file; ok is false when
// none applies.
func morePickScenario(has func(string) bool, pipeline bool) (scenario, bool) {
	switch {
	case has("recoverable"):
		return scenario{name: "recoverable", pipeline: true, refuse: recoverableError}, true
	case has("mcp") && pipeline:
		return scenario{name: "mcp pipeline", pipeline: true, run: func(_ context.Context, e *emitter) error { return e.mcpPipeline() }}, true
	case has("mcp"):
		return scenario{name: "mcp", run: func(_ context.Context, e *emitter) error { return e.mcpTurn() }}, true
	case has("backup blocked") && pipeline:
		return scenario{name: "backup blocked pipeline", pipeline: true, run: func(_ context.Context, e *emitter) error { return e.backupBlockedPipeline() }}, true
	case has("backup blocked"):
		return scenario{name: "backup blocked", run: func(_ context.Context, e *emitter) error { return e.backupBlockedTurn() }}, true
	case has("hand over") || has("handover"):
		return scenario{name: "hand over", pipeline: true, run: func(_ context.Context, e *emitter) error { return e.handoverPause() }}, true
	case has("pause"):
		return scenario{name: "pause", pipeline: true, run: func(_ context.Context, e *emitter) error { return e.pauseConfirmation() }}, true
	}
	return scenario{}, false
}
