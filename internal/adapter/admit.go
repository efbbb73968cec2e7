package adapter

import (
	"context"
	"errors"
	"log/slog"

	"github.com/google/uuid"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Request is one validated AG-UI request on its way to admission.
type Request struct {
	Input *agui.RunAgentInput
	// Body is the raw request body; its canonical digest keys idempotency.
	Body []byte
	// Lang is the resolved request language (protocol.md §2.9).
	Lang i18n.Lang
}

// Run is an admitted run: the thread's active run until Stream returns.
type Run struct {
	a      *Adapter
	log    *slog.Logger // with the request, thread, run and execution ids
	t      *thread
	in     *agui.RunAgentInput
	ic     *request.IacCode
	cwd    string
	lang   i18n.Lang
	resume bool
	// orphanTask is the task of an execution a crash left unfinished,
	// cancelled before the new turn is sent (orphan.go). orphanContext is
	// set instead when that execution never stored a task id: its open
	// tasks are looked up by context.
	orphanTask    string
	orphanContext string
	// guidance steers the running pipeline (guidance.go).
	guidance bool
}

func isNotFound(err error) bool { return errors.Is(err, state.ErrNotFound) }

// forwarded validates forwardedProps: strictly, or for the generic
// profile with iacCode optional (request.ParseGenericForwardedProps).
func (a *Adapter) forwarded(ctx context.Context, in *agui.RunAgentInput) (*request.IacCode, error) {
	parse := request.ParseForwardedProps
	if a.generic {
		parse = request.ParseGenericForwardedProps
	}
	ic, err := parse(in.ForwardedProps)
	if err != nil {
		a.reqLog(ctx).Debug("forwardedProps refused", "threadId", in.ThreadID, "reason", err.Error())
		return nil, forwardedRefusal(err)
	}
	if a.generic && ic.RosInvocationID == "" {
		ic.RosInvocationID = genericRosInvocationID
	}
	return ic, nil
}

// workspace resolves the workspace the thread is bound to; the generic
// profile has none (genericCWD).
func (a *Adapter) workspace(ctx context.Context, in *agui.RunAgentInput, ic *request.IacCode) (string, error) {
	if a.generic {
		return genericCWD, nil
	}
	cwd, err := request.ResolveWorkspace(ic.CWD, a.roots, a.excluded...)
	if err != nil {
		a.reqLog(ctx).Debug("workspace refused", "threadId", in.ThreadID, "reason", err.Error())
		return "", workspaceRefusal(err)
	}
	return cwd, nil
}

// Admit runs the admission algorithm of protocol.md §3.6. It returns an
// *Error with the HTTP status to answer when the request is refused.
func (a *Adapter) Admit(ctx context.Context, req Request) (*Run, error) {
	ctx, span := a.startSpan(ctx, "agui.admission")
	defer span.End()
	run, err := a.admit(ctx, req)
	if err != nil && ctx.Err() != nil {
		// The client left during admission: no refusal to count.
		return nil, err
	}
	code := ""
	if err != nil {
		code = CodeStateUnavailable // what the server answers for a non-*Error
		if e, ok := asError(err); ok {
			code = e.Code
		}
		a.obs.AdmissionRejected(code)
	}
	a.traceAdmission(span, req, run, code)
	return run, err
}

func (a *Adapter) admit(ctx context.Context, req Request) (*Run, error) {
	in := req.Input
	ic, err := a.forwarded(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := a.fenceAdmit(in.ThreadID, ic); err != nil {
		return nil, err
	}
	cwd, err := a.workspace(ctx, in, ic)
	if err != nil {
		return nil, err
	}
	if err := a.toolsRefusal(ctx, in); err != nil {
		return nil, err
	}
	digest, err := request.Digest(req.Body)
	if err != nil {
		return nil, errInvalidForwarded
	}
	if _, err := state.FileKey(in.ThreadID); err != nil {
		return nil, errStateUnavailable
	}
	t, err := a.acquire(ctx, in.ThreadID)
	if err != nil {
		if ctx.Err() != nil {
			// The client left during admission: not a state failure.
			return nil, ctx.Err()
		}
		a.reqLog(ctx).Warn("AG-UI thread state unavailable", "threadId", in.ThreadID, "error", err)
		return nil, errStateUnavailable
	}
	run := &Run{a: a, t: t, in: in, ic: ic, cwd: cwd, lang: req.Lang, resume: len(in.Resume) > 0,
		guidance: ic.ActiveGuidance && !a.generic}
	if err := a.admitLocked(ctx, run, digest); err != nil {
		a.unpin(in.ThreadID, t)
		return nil, err
	}
	a.touch()
	return run, nil
}

// admitLocked checks the request against the thread (§3.6) and records
// the run id and the active run, in one update.
func (a *Adapter) admitLocked(ctx context.Context, run *Run, digest string) error {
	t, in, ic := run.t, run.in, run.ic
	t.mu.Lock()
	defer t.mu.Unlock()
	// THREAD_BUSY comes after the run-id checks (§3.6): an idempotent
	// replay of the active run is still a duplicate. Guidance steers the
	// active run, so it never meets it (§5.13).
	busy := t.activeRun != "" && !run.guidance
	_, err := a.updateLocked(ctx, t, func(doc *state.Thread) (*state.Thread, error) {
		fresh := doc == nil
		if fresh && (run.resume || run.guidance) {
			return nil, errExecutionLost.with(&Details{Field: "/threadId", Reason: "names no thread this server knows"})
		}
		if fresh {
			doc = state.NewThread(in.ThreadID, run.cwd, ic.UserID, uuid.NewString(), ic.RosInvocationID)
		}
		key, err := a.runIDKey(t, doc, run, digest)
		if err != nil {
			return nil, err
		}
		if busy {
			return nil, errThreadBusy
		}
		if doc.CWD != run.cwd {
			return nil, errBindingConflict.with(&Details{Field: "/forwardedProps/iacCode/cwd", Reason: "differs from the workspace the thread is bound to"})
		}
		if !sameOptional(doc.UserID, ic.UserID) {
			return nil, errBindingConflict.with(&Details{Field: "/forwardedProps/iacCode/userId", Reason: "differs from the userId the thread is bound to"})
		}
		switch {
		case run.guidance:
			if err := guidanceRefusal(doc, run); err != nil {
				return nil, err
			}
		case run.resume && doc.Execution.RosInvocationID != ic.RosInvocationID:
			return nil, errResumeMismatch.with(&Details{Field: "/forwardedProps/iacCode/rosInvocationId",
				Reason: "does not match the interrupted run's rosInvocationId", Hint: i18n.MsgHintRosInvocationMismatch})
		case !run.resume && len(doc.Execution.Pending) > 0:
			return nil, errResumeRequired.with(&Details{Pending: pendingInterrupts(doc)})
		case !run.resume && !fresh:
			run.orphanTask = unfinishedTask(doc)
			if run.orphanTask == "" && unfinished(doc) {
				run.orphanContext = doc.ContextID
			}
			rotate(doc, ic.RosInvocationID)
		}
		doc.RecordRun(key, digest)
		return doc, nil
	})
	if err != nil {
		if _, ok := asError(err); !ok {
			a.reqLog(ctx).Warn("Failed to persist AG-UI thread state", "threadId", in.ThreadID, "error", err)
			return errStateUnavailable
		}
		return err
	}
	if !run.guidance {
		t.activeRun = in.RunID
	}
	run.log = a.runLog(ctx, in.ThreadID, in.RunID, t.doc.Execution.ExecutionID, t.doc.Execution.RosInvocationID)
	return nil
}

// rotate starts a new execution for a new normal turn (protocol.md §8.10).
// An execution that was never marked terminal (for example after a crash)
// is marked terminal first, so that its cancel handle answers
// already_terminal instead of being forgotten (docs/decisions.md).
func rotate(doc *state.Thread, rosInvocationID string) {
	if !containsString(doc.TerminalExecutionIDs, doc.Execution.ExecutionID) {
		doc.MarkTerminal()
	}
	doc.Rotate(uuid.NewString(), rosInvocationID)
}

func sameOptional(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
