package adapter

import (
	"context"
	"sort"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// checkIdentity compares an event's task, context and session with the
// binding without changing it (protocol.md §4.6).
func (rs *runState) checkIdentity(ev *a2a.Event) error {
	taskID, contextID, sessionID := mapper.Identity(ev)
	doc := rs.r.a.view(rs.r.t)
	if taskID != "" && doc.Execution.TaskID != nil && *doc.Execution.TaskID != taskID {
		return runErr(CodeA2AProtocolError, i18n.MsgTaskIdentityChanged)
	}
	if contextID != "" && contextID != doc.ContextID {
		return runErr(CodeA2AProtocolError, i18n.MsgContextIdentityChanged)
	}
	if sessionID != "" && doc.IacCodeSessionID != nil && *doc.IacCodeSessionID != sessionID {
		return runErr(CodeA2AProtocolError, i18n.MsgSessionIdentityChanged)
	}
	return nil
}

// bindIdentity checks an event's identities and persists the first task id
// and session id before any event that depends on them reaches the client,
// failing closed (protocol.md §4.6, §9.3). The session event follows as
// soon as both are durable.
func (rs *runState) bindIdentity(ctx context.Context, ev *a2a.Event) error {
	taskID, contextID, sessionID := rs.m.Identity(ev)
	// Fast path, once per streamed token: everything the event names is
	// already bound, so there is nothing to check against the document.
	if rs.boundTask != "" && (rs.boundSession != "" || rs.r.a.generic) && (taskID == "" || taskID == rs.boundTask) &&
		(contextID == "" || contextID == rs.boundContext) && (sessionID == "" || sessionID == rs.boundSession) {
		return nil
	}
	if err := rs.checkIdentity(ev); err != nil {
		return err
	}
	if d := rs.deferredTask; d != "" && taskID != "" && taskID != d {
		return runErr(CodeA2AProtocolError, i18n.MsgTaskIdentityChanged)
	}
	if taskID != "" && rs.seenTask == "" {
		rs.seenTask = taskID // cancellable even if its commit fails
	}
	if taskID == "" {
		taskID = rs.deferredTask
	}
	rs.deferredTask = ""
	doc := rs.r.a.view(rs.r.t)
	if taskID != "" && doc.Execution.TaskID == nil && sessionID == "" && doc.IacCodeSessionID == nil && rs.hold && !rs.r.a.generic {
		// iac-code names the task in its first frame and the session in
		// the next, which is already read: one write for both
		// (deferIdentity.go).
		rs.deferredTask = taskID
		return nil
	}
	return rs.commitIdentity(ctx, taskID, sessionID)
}

// commitIdentity persists the task id and the session id the thread does
// not have yet, in one write. A failed write fails closed with the message
// of the first identity it did not commit (§9.3).
func (rs *runState) commitIdentity(ctx context.Context, taskID, sessionID string) error {
	a, t := rs.r.a, rs.r.t
	doc, err := a.update(ctx, t, func(doc *state.Thread) (*state.Thread, error) {
		changed := false
		if taskID != "" && doc.Execution.TaskID == nil {
			doc.Execution.TaskID, changed = &taskID, true
		}
		if sessionID != "" && doc.IacCodeSessionID == nil {
			doc.IacCodeSessionID, changed = &sessionID, true
		}
		if !changed {
			return nil, errNoChange
		}
		return doc, nil
	})
	if err != nil {
		if taskID != "" && a.view(t).Execution.TaskID == nil {
			return rs.failClosed(ctx, i18n.MsgMappingCommitFailed)
		}
		return rs.failClosed(ctx, i18n.MsgSessionMappingCommitFailed)
	}
	ready := doc.Execution.TaskID != nil && (doc.IacCodeSessionID != nil || a.generic)
	if ready {
		rs.boundTask, rs.boundContext = *doc.Execution.TaskID, doc.ContextID
		if doc.IacCodeSessionID != nil {
			rs.boundSession = *doc.IacCodeSessionID
		}
		if !rs.sessionSent {
			rs.sessionEvent()
		}
	}
	return nil
}

// failClosed handles a failed recovery-critical write (protocol.md §9.3):
// cancel the A2A task, clear pending, mark the execution terminal, persist
// best effort, and report STATE_PERSISTENCE_FAILED.
func (rs *runState) failClosed(ctx context.Context, msg string) error {
	rs.abandon(ctx)
	return runErr(CodeStatePersistenceFailed, msg)
}

// abandon ends the execution on the A2A side and in the mapping: the task
// is cancelled (errors ignored), pending interrupts are cleared and the
// execution is marked terminal, persisted best effort.
func (rs *runState) abandon(ctx context.Context) {
	rs.cancelTask(ctx)
	rs.r.a.updateBestEffort(ctx, rs.r.t, rs.r.log, endExecution)
}

// endExecution clears the pending interrupts and marks the current
// execution terminal.
func endExecution(doc *state.Thread) (*state.Thread, error) {
	if doc == nil {
		return nil, errNoChange
	}
	clear(doc.Execution.Pending)
	doc.MarkTerminal()
	return doc, nil
}

// sessionEvent appends CUSTOM iac-code.session.v1 once per run (§4.14).
func (rs *runState) sessionEvent() {
	if rs.sessionSent {
		return
	}
	rs.sessionSent = true
	doc := rs.r.a.view(rs.r.t)
	value := map[string]any{
		"schemaVersion":   1,
		"threadId":        doc.ThreadID,
		"aguiRunId":       rs.r.in.RunID,
		"executionId":     doc.Execution.ExecutionID,
		"contextId":       doc.ContextID,
		"taskId":          optional(doc.Execution.TaskID),
		"rosInvocationId": doc.Execution.RosInvocationID,
		"sessionId":       optional(doc.IacCodeSessionID),
	}
	rs.buf = append(rs.buf, &agui.Custom{Name: "iac-code.session.v1", Value: value})
}

func optional(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// commitInterrupt persists new required inputs before announcing them, then
// closes the spans and ends the run with the interrupt outcome (§5.4).
func (rs *runState) commitInterrupt(ctx context.Context, inputs []mapper.Input) error {
	doc := rs.r.a.view(rs.r.t)
	var taskID string
	if doc.Execution.TaskID != nil {
		taskID = *doc.Execution.TaskID
	}
	for _, in := range inputs {
		if mapper.ForeignInput(in, taskID, doc.ContextID) {
			return runErr(CodeA2AProtocolError, i18n.MsgInterruptForeign)
		}
	}
	rs.m.RecordTextSnapshot()
	digests := rs.m.TextDigests()
	seq, open := rs.m.PipelineSequence(), rs.m.DurableOpenSteps()
	var added []mapper.Input // an input already pending is not a new interrupt
	_, err := rs.r.a.update(ctx, rs.r.t, func(doc *state.Thread) (*state.Thread, error) {
		added = added[:0]
		for _, in := range inputs {
			if _, ok := doc.Execution.Pending[in.ID]; !ok {
				added = append(added, in)
			}
			doc.Execution.Pending[in.ID] = state.Pending{Value: in.Projection, Sideband: in.Sideband}
		}
		doc.Execution.TextSnapshotDigests = digests
		doc.Execution.PipelineSequence, doc.Execution.PipelineOpenSteps = seq, open
		return doc, nil
	})
	if err != nil {
		return rs.failClosed(ctx, i18n.MsgInterruptedStateCommitFailed)
	}
	rs.r.a.observeInterrupts(ctx, added)
	return rs.announceInterrupts(ctx)
}

// announceInterrupts ends the run with an interrupt outcome listing every
// durable pending input: spans closed first, the thread released, then
// RUN_FINISHED. A client lost at this point resumes later.
func (rs *runState) announceInterrupts(ctx context.Context) error {
	interrupts := pendingInterrupts(rs.r.a.view(rs.r.t))
	rs.paused = true
	rs.outcome = RunOutcomeInterrupt
	rs.sessionEvent()
	rs.buf = rs.m.CloseAll(rs.buf)
	rs.buf = append(rs.buf, &agui.RunFinished{
		ThreadID: rs.r.in.ThreadID, RunID: rs.r.in.RunID,
		Outcome: agui.Outcome{Type: agui.OutcomeInterrupt, Interrupts: interrupts},
		Usage:   rs.m.Usage(),
	})
	rs.r.settle(ctx, rs)
	if err := rs.flush(); err != nil {
		return err
	}
	return errPaused
}

// pendingInterrupts rebuilds the AG-UI interrupts of every pending input,
// sorted by id.
func pendingInterrupts(doc *state.Thread) []agui.Interrupt {
	ids := make([]string, 0, len(doc.Execution.Pending))
	for id := range doc.Execution.Pending {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]agui.Interrupt, 0, len(ids))
	for _, id := range ids {
		out = append(out, mapper.BuildInterrupt(doc.Execution.Pending[id].Value))
	}
	return out
}
