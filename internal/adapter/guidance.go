package adapter

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Active guidance (protocol.md §5.13): a user message sent into the
// thread's running pipeline task, next to the run that streams it. A
// guidance run owns nothing: it is not the thread's active run, never
// rotates, marks or cancels the execution, and leaves pending interrupts
// alone. Its only durable trace is its run id in runDigests.

// guidanceRefusal is admission's guidance check (§3.6 step 10, §5.13) on
// the stored document; the caller holds the thread's lock.
func guidanceRefusal(doc *state.Thread, run *Run) error {
	switch {
	case run.resume, run.ic.RunMode != "pipeline", doc.Execution.TaskID == nil, *doc.Execution.TaskID == "":
		return errExecutionLost
	case len(doc.Execution.Pending) > 0:
		return errResumeRequired.with(&Details{Pending: pendingInterrupts(doc)})
	}
	return nil
}

// streamGuidance sends the guidance and answers RUN_STARTED, then
// RUN_FINISHED success without usage, or one RUN_ERROR. A client that
// leaves gets nothing and cancels nothing: the message is delivered all
// the same (detachUntilTask) and the pipeline runs on.
func (r *Run) streamGuidance(ctx context.Context, sink Sink) {
	rs := r.newRunState(sink)
	ctx = rs.startSpan(ctx)
	r.a.obs.RunStarted(RunKindGuidance)
	r.log.Info("run started", "kind", RunKindGuidance)
	defer func() {
		rs.report()
		r.a.unpin(r.in.ThreadID, r.t)
		r.a.touch()
	}()
	rs.buf = append(rs.buf, &agui.RunStarted{ThreadID: r.in.ThreadID, RunID: r.in.RunID, ParentRunID: r.in.ParentRunID})
	err := rs.guide(ctx)
	var e *Error
	switch {
	case err == nil:
		rs.outcome = RunOutcomeSuccess
		rs.buf = append(rs.buf, &agui.RunFinished{ThreadID: r.in.ThreadID, RunID: r.in.RunID,
			Outcome: agui.Outcome{Type: agui.OutcomeSuccess}})
	case errors.Is(err, errClientGone) || ctx.Err() != nil:
		return
	case errors.As(err, &e):
		rs.buf = append(rs.buf, rs.runError(e.Code, e.Msg))
	default:
		r.log.LogAttrs(ctx, slog.LevelError, "AG-UI A2A adapter run failed", errAttr(err))
		rs.buf = append(rs.buf, rs.runError(CodeA2AUnavailable, i18n.MsgA2AUnavailable))
	}
	rs.terminal = true
	_ = rs.flush()
}

// guide sends the latest user message to the execution's task and reads
// the answer stream to its end, checking each item: a JSON-RPC error, a
// changed identity, a failed or cancelled state end the run. Nothing is
// mapped: the streaming run of the thread shows what the guidance did.
func (rs *runState) guide(ctx context.Context) error {
	r := rs.r
	ui, err := userContent(r.in.Messages)
	if err != nil {
		return err
	}
	// RUN_STARTED goes out first; a client already gone still has its
	// admitted guidance delivered (its run id is spent).
	_ = rs.flush()
	doc := r.a.view(r.t)
	up, watch, stop := detachUntilTask(ctx)
	defer stop()
	s, err := r.a.client.SendStreamingMessage(up, &a2a.SendParams{
		MessageID: ui.MessageID,
		ContextID: doc.ContextID,
		TaskID:    *doc.Execution.TaskID,
		Parts:     ui.Parts,
		Metadata:  request.Metadata(r.ic, r.cwd, string(r.lang)),
	})
	if err != nil {
		return err
	}
	s = watch(s)
	defer s.Close()
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return errClientGone
			}
			return err
		}
		if rs.trace {
			rs.traceFrame(ev)
		}
		if err := rs.checkIdentity(ev); err != nil {
			return err
		}
		switch ev.State() {
		case a2a.StateFailed, a2a.StateRejected, a2a.StateAuthRequired:
			return runErr(CodeA2AExecutionFailed, i18n.MsgA2AExecutionFailed)
		case a2a.StateCanceled:
			return runErr(CodeCancelled, i18n.MsgCancelled)
		}
	}
}
