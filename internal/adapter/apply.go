package adapter

import (
	"context"
	"errors"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/projection"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// apply sends the validated answers to A2A (protocol.md §5.8) and follows the
// continuation. Durable pending state is removed only when A2A accepted an
// answer (§5.9).
func (rs *runState) apply(ctx context.Context, answers []answer, taskID, contextID string) error {
	var perms, texts []answer
	for _, a := range answers {
		switch {
		case kindOf(a.pending) == projection.KindA2AAuthRequired && a.entry.Status == agui.ResumeResolved:
			return rs.resumeSignedIn(ctx, a, taskID)
		case isPermission(a.pending):
			perms = append(perms, a)
		case a.entry.Status == agui.ResumeCancelled && kindOf(a.pending) != projection.KindCloudResourceSelection:
			return rs.cancelByAnswer(ctx, a)
		default:
			texts = append(texts, a)
		}
	}
	// Build every text first so that a payload without an answer is refused
	// before anything reaches A2A.
	bodies := make([]string, len(texts))
	for i, a := range texts {
		text, err := answerText(a, contextID, taskID)
		if err != nil {
			return err
		}
		bodies[i] = text
	}
	if len(texts) == 0 && allSideband(perms) {
		return rs.applySideband(ctx, perms, taskID, contextID)
	}
	r := rs.r
	for _, a := range perms {
		params := &a2a.SendParams{
			MessageID: "agui-resume-" + r.in.RunID + "-" + a.entry.InterruptID,
			ContextID: contextID, TaskID: taskID,
			Parts:    []*a2asdk.Part{dataPart(permissionData(a, taskID))},
			Metadata: request.HandoffMetadata(r.ic),
		}
		if err := rs.sendAnswer(ctx, params, a, "", i18n.MsgPermissionResponseNotAccepted); err != nil || rs.paused {
			return err
		}
	}
	// One text message at most (protocol.md §5.8, §12.11; chooseText). A
	// text answer is a new turn for the executor, so it carries the request
	// metadata (workspace, language, run mode, credentials) like the first
	// message.
	if len(texts) > 0 {
		i, a := chooseText(texts, rs.awaited)
		params := &a2a.SendParams{
			MessageID: "agui-resume-" + r.in.RunID,
			ContextID: contextID, TaskID: taskID,
			Parts:    []*a2asdk.Part{a2asdk.NewTextPart(bodies[i])},
			Metadata: r.metadata(),
		}
		rs.parked = r.a.generic
		if err := rs.sendAnswer(ctx, params, a, answerLabel(a, bodies[i]), i18n.MsgInterruptResponseNotAccepted); err != nil || rs.paused {
			return err
		}
	}
	return rs.follow(ctx, taskID)
}

func dataPart(data map[string]any) *a2asdk.Part {
	p := a2asdk.NewDataPart(data)
	p.MediaType = "application/json"
	return p
}

func allSideband(perms []answer) bool {
	if len(perms) == 0 {
		return false
	}
	for _, a := range perms {
		if !a.pending.Sideband {
			return false
		}
	}
	return true
}

// sendAnswer streams one answer; its first valid event commits it.
func (rs *runState) sendAnswer(ctx context.Context, params *a2a.SendParams, a answer, label, notAccepted string) error {
	s, err := rs.r.a.client.SendStreamingMessage(ctx, params)
	if err != nil {
		return rs.answerRefused(ctx, err, notAccepted)
	}
	defer s.Close()
	got, err := rs.consume(ctx, s, func() error { return rs.commitAnswer(ctx, a, label) })
	if !got && err == nil {
		return runErr(CodeA2AUnavailable, notAccepted)
	}
	if !got {
		return rs.answerRefused(ctx, err, notAccepted)
	}
	return err
}

// answerRefused maps an A2A refusal of an answer; pending state stays.
func (rs *runState) answerRefused(ctx context.Context, err error, notAccepted string) error {
	var rpc *a2a.RPCError
	switch {
	case ctx.Err() != nil:
		return errClientGone
	case errors.As(err, &rpc) && rpc.BackupNotReady():
		return runErr(CodeSessionBackupNotReady, i18n.MsgSessionBackupNotReady)
	case errors.As(err, &rpc):
		return runErr(CodeA2AUnavailable, notAccepted)
	}
	if _, ok := asError(err); ok {
		return err
	}
	return runErr(CodeA2AUnavailable, notAccepted)
}

// applySideband answers candidate permissions with non-streaming sends,
// committing each right after its own success (§5.8, §5.9).
func (rs *runState) applySideband(ctx context.Context, perms []answer, taskID, contextID string) error {
	rs.startSideband(taskID)
	for _, a := range perms {
		_, err := rs.r.a.client.SendMessage(ctx, &a2a.SendParams{
			MessageID: "agui-resume-" + a.entry.InterruptID,
			ContextID: contextID, TaskID: taskID,
			Parts:    []*a2asdk.Part{dataPart(permissionData(a, taskID))},
			Metadata: request.HandoffMetadata(rs.r.ic),
		})
		if err != nil {
			return rs.answerRefused(ctx, err, i18n.MsgA2ARejectedInterruptResponse)
		}
		if err := rs.commitAnswer(ctx, a, ""); err != nil {
			return err
		}
	}
	task, err := rs.r.a.client.GetTask(ctx, taskID, historyLength)
	if err != nil {
		return err
	}
	if done, err := rs.handle(ctx, task); err != nil || done {
		return err
	}
	return rs.follow(ctx, taskID)
}

// commitAnswer records the applied digest and removes the pending entry in
// one write; a failed write fails closed (§5.9 step 4). It then announces
// the resumed run and the answered tool's result.
func (rs *runState) commitAnswer(ctx context.Context, a answer, label string) error {
	all := append([]answer{a}, a.superseded...)
	_, err := rs.r.a.update(ctx, rs.r.t, func(doc *state.Thread) (*state.Thread, error) {
		for _, x := range all {
			doc.AddApplied(doc.Execution.ExecutionID, x.entry.InterruptID, x.digest)
			delete(doc.Execution.Pending, x.entry.InterruptID)
		}
		return doc, nil
	})
	if err != nil {
		return rs.failClosed(ctx, i18n.MsgAcceptedResponseCommitFailed)
	}
	traceAnswers(ctx, all)
	for _, x := range all {
		rs.answered[x.entry.InterruptID] = true
	}
	rs.sessionEvent()
	if label != "" && a.entry.Status == agui.ResumeResolved {
		if id := toolUseIDOf(a.pending); id != "" {
			rs.buf = rs.m.ToolResult(rs.buf, id, label)
		}
	}
	return nil
}

// cancelByAnswer handles a cancelled question or selection: the task is
// cancelled and the run ends with CANCELLED (§5.8). The cancelled answer
// is recorded as applied with the execution's end, so that its replay is
// told RESUME_ALREADY_APPLIED (§5.10) rather than EXECUTION_LOST
// (docs/decisions.md).
func (rs *runState) cancelByAnswer(ctx context.Context, a answer) error {
	rs.cancelTask(ctx)
	rs.r.a.updateBestEffort(ctx, rs.r.t, rs.r.log, func(doc *state.Thread) (*state.Thread, error) {
		if doc == nil {
			return nil, errNoChange
		}
		doc.AddApplied(doc.Execution.ExecutionID, a.entry.InterruptID, a.digest)
		return endExecution(doc)
	})
	traceAnswers(ctx, []answer{a})
	return runErr(CodeCancelled, i18n.MsgCancelledByInterruptResponse)
}

// follow continues an execution after its answers: SubscribeToTask unless a
// stopping state was seen, and GetTask to repair the view when the
// subscription fails or ends early (§5.8, §5.12).
func (rs *runState) follow(ctx context.Context, taskID string) error {
	if rs.paused || stops(rs.lastState) {
		return nil
	}
	client := rs.r.a.client
	s, err := client.SubscribeToTask(ctx, taskID)
	if err == nil {
		var got bool
		got, err = rs.consume(ctx, s, nil)
		s.Close()
		var rpc *a2a.RPCError
		if !got && rs.r.a.generic && errors.As(err, &rpc) {
			// An SDK agent refuses in an SSE error frame the subscription
			// of a task whose execution already ended: GetTask decides.
			err = nil
		}
		if err != nil || rs.paused || stops(rs.lastState) {
			return err
		}
	} else if ctx.Err() != nil {
		return errClientGone
	}
	task, err := client.GetTask(ctx, taskID, historyLength)
	if err != nil {
		return err
	}
	if _, err := rs.handle(ctx, task); err != nil || rs.paused || stops(rs.lastState) {
		return err
	}
	if rs.sideband {
		// Candidates of a sideband pipeline may still run: the run ends
		// A2A_EXECUTION_FAILED by §4.4 step 7 and cancels nothing.
		return nil
	}
	// The continuation of a streamed answer ended while the task still
	// runs: give up on it (A2A_UNAVAILABLE, and the task is cancelled), as
	// the newest original does (protocol.md §5.12).
	return errContinuationLost
}

// errContinuationLost reports a continuation stream that ended before the
// task reached a stopping state, even after GetTask.
var errContinuationLost = errors.New("A2A continuation ended before the task stopped")

// stops reports whether a state ends the A2A loop (§4.4 step 7).
func stops(s string) bool {
	switch s {
	case a2a.StateFailed, a2a.StateRejected, a2a.StateAuthRequired, a2a.StateCanceled, a2a.StateCompleted, a2a.StateInputRequired:
		return true
	}
	return false
}
