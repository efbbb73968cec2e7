package adapter

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Sink receives a run's AG-UI events; agui.Writer implements it. A write
// error means the client is gone.
type Sink interface {
	WriteBatch(evs []agui.Event) error
}

// maxHeldEvents bounds how many events wait for one flush.
const maxHeldEvents = 512

// midFrameDelay bounds how long mapped events may wait in the writer while
// the upstream is in the middle of a frame (protocol.md §4.1).
const midFrameDelay = 2 * time.Millisecond

// soonSink is a Sink that can hold a batch for a bounded time
// (agui.Writer.WriteBatchSoon).
type soonSink interface {
	WriteBatchSoon(evs []agui.Event, within time.Duration) error
}

// errPaused ends a run that already wrote its interrupt outcome.
var errPaused = errors.New("run paused on an interrupt")

// errClientGone ends a run whose client disconnected.
var errClientGone = errors.New("client disconnected")

// runState is the mutable state of one streaming run. Only the run's own
// goroutine touches it; the thread document changes only through update.
type runState struct {
	r           *Run
	m           *mapper.Mapper
	sink        Sink
	buf         []agui.Event
	sessionSent bool
	lastState   string
	terminal    bool // a terminal AG-UI event was written
	paused      bool // the run ended with an interrupt outcome
	// hold defers the flush while the next A2A frame is already buffered,
	// so a burst of deltas costs one write instead of one per event; a
	// stalled upstream never delays what was mapped.
	hold bool
	// midFrame: nothing complete is buffered but the next frame has begun
	// arriving; the flush may then wait up to midFrameDelay, so a burst
	// read in pieces costs fewer writes. Never before the first mapped
	// events of the stream (streamed) were written.
	midFrame, streamed bool
	settled            bool // the thread was released (see settle)
	// answered holds the inputs already answered in this execution, so the
	// mapper never announces them again.
	answered map[string]bool
	// bound* cache the identities once the task and session are durable,
	// so identity checks of streamed tokens take no lock.
	boundTask, boundSession, boundContext string
	// seenTask is the first task id the stream named, durable or not: the
	// task to cancel when the run gives up on it.
	seenTask string
	// outcome and code are the decided end of the run ("" until then: a
	// disconnect); events counts the AG-UI events written (Observer).
	outcome, code string
	events        int
	started       time.Time
	// firstEvent is the wait from the start to the first A2A event;
	// span is the run's span (offSpan while tracing is off).
	firstEvent time.Duration
	span       trace.Span
	trace      bool // --debug: log every A2A frame and AG-UI batch
	// sideband marks a continuation after sideband answers; catchUpDue is
	// the pipeline catch-up it still owes (sideband.go).
	sideband   bool
	catchUpDue *pendingCatchUp
	// awaited is the task's direct input at resume (texts.go).
	awaited string
	// deferredTask is a task id not yet written (deferidentity.go).
	deferredTask string
	// fenced records that the closing write was refused because another
	// replica owns the thread now.
	fenced bool
	// stopped: the shutdown ended the run (shutdown.go); its task and
	// execution are left as they are.
	stopped bool
	// parked: the next event opens the stream of an answer, where a
	// generic agent may first repeat the waiting task (generic.go).
	parked bool
	// agentError is the message of a generic agent's failed task.
	agentError string
}

// Stream executes the run, writing its events to sink, and releases the
// thread when it returns. ctx is the client's request context: its
// cancellation is the disconnect signal (agui.md §1.2).
func (r *Run) Stream(ctx context.Context, sink Sink) {
	if r.guidance {
		r.streamGuidance(ctx, sink)
		return
	}
	ctx, done := r.a.stoppable(ctx)
	defer done()
	rs := r.newRunState(sink)
	ctx = rs.startSpan(ctx)
	r.a.obs.RunStarted(rs.kind())
	defer r.release(ctx, rs)
	rs.buf = append(rs.buf, &agui.RunStarted{ThreadID: r.in.ThreadID, RunID: r.in.RunID, ParentRunID: r.in.ParentRunID})
	rs.buf = rs.m.ReopenSteps(rs.buf)
	// RUN_STARTED leaves as soon as the admission is durable, not with the
	// first A2A frame: a client's turn latency is one durable write. The
	// log line's write comes after it.
	err := rs.flush()
	r.log.Info("run started", "kind", rs.kind())
	if err == nil && r.resume {
		err = rs.resume(ctx)
	} else if err == nil {
		err = rs.newTurn(ctx)
	}
	if err == nil && !rs.paused {
		err = rs.end(ctx)
	}
	rs.fail(ctx, err)
}

// HoldsStart reports whether the run holds RUN_STARTED past its first
// moment (a guidance run answers it at its end, protocol.md §5.13), so
// that its stream must send its headers, and heartbeats, before it.
func (r *Run) HoldsStart() bool { return r.guidance }

func (r *Run) newRunState(sink Sink) *runState {
	doc := r.a.view(r.t)
	ex := doc.Execution
	execID := ex.ExecutionID
	applied := doc.AppliedResumeDigests
	cfg := mapper.Config{
		ThreadID:         r.in.ThreadID,
		RunID:            r.in.RunID,
		PipelineSequence: ex.PipelineSequence,
		DurableOpenSteps: append([]string(nil), ex.PipelineOpenSteps...),
		TextDigests:      append([]string(nil), ex.TextSnapshotDigests...),
		Generic:          r.a.generic,
	}
	answered := make(map[string]bool)
	for _, d := range applied {
		if d.ExecutionID == execID {
			answered[d.InterruptID] = true
		}
	}
	cfg.Answered = func(id string) bool { return answered[id] }
	return &runState{r: r, m: mapper.New(cfg), sink: sink, buf: make([]agui.Event, 0, 16), answered: answered, started: time.Now(), span: offSpan,
		trace: r.log.Enabled(context.Background(), slog.LevelDebug)}
}

// userContent converts the latest user message to A2A parts; a refusal is
// INVALID_INPUT with the content error's message (protocol.md §3.2).
func userContent(messages []agui.Message) (*request.UserInput, error) {
	ui, err := request.UserContent(messages)
	if err != nil {
		var ce *request.ContentError
		if errors.As(err, &ce) {
			return nil, runErr(CodeInvalidInput, ce.Msg)
		}
		return nil, runErr(CodeInvalidInput, i18n.MsgUserMessageRequired)
	}
	return ui, nil
}

// newTurn sends the latest user message and follows the A2A stream.
func (rs *runState) newTurn(ctx context.Context) error {
	r := rs.r
	ui, err := userContent(r.in.Messages)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errClientGone // gone before anything was started upstream
	}
	rs.cancelOrphan(ctx)
	contextID := r.a.view(r.t).ContextID
	up, watch, stop := detachUntilTask(ctx)
	defer stop()
	s, err := r.a.client.SendStreamingMessage(up, &a2a.SendParams{
		MessageID: ui.MessageID,
		ContextID: contextID,
		Parts:     r.parts(ui.Parts),
		Metadata:  r.metadata(),
	})
	if err != nil {
		if ctx.Err() != nil {
			return errClientGone
		}
		return err
	}
	s = watch(s)
	defer s.Close()
	_, err = rs.consume(ctx, s, nil)
	return err
}

// consume maps A2A events from s until the stream ends or the turn stops.
// accept, when set, is called once with the first valid event (the commit
// point of an interrupt answer, protocol.md §5.9). It reports whether any
// valid event arrived.
func (rs *runState) consume(ctx context.Context, s Stream, accept func() error) (bool, error) {
	got := false
	st, _ := s.(starter)
	rs.streamed = false // this stream's first events are never held
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			if err := rs.bindDeferred(ctx); err != nil {
				return got, err
			}
			return got, rs.flush()
		}
		if err != nil {
			_ = rs.bindDeferred(ctx) // the stream's error is the one to report
			if ctx.Err() != nil {
				return got, errClientGone
			}
			return got, err
		}
		if !got && rs.firstEvent == 0 {
			rs.firstEvent = time.Since(rs.started)
		}
		if !got && accept != nil {
			if err := rs.checkIdentity(ev); err != nil {
				return got, err
			}
			got = true
			if err := accept(); err != nil {
				return got, err
			}
		}
		got = true
		if rs.trace {
			rs.traceFrame(ev)
		}
		rs.hold = s.Buffered()
		rs.midFrame = !rs.hold && st != nil && st.Started()
		done, err := rs.handle(ctx, ev)
		if err != nil || done {
			return got, err
		}
	}
}

// handle maps one live A2A event. It reports done when the turn stopped:
// an interrupt was committed, or a state ended the A2A loop (protocol.md
// §4.4 step 7).
func (rs *runState) handle(ctx context.Context, ev *a2a.Event) (bool, error) {
	if rs.parked {
		rs.parked = false
		if parkedTask(ev) {
			// State only; what is buffered (the session event of the
			// answer's commit) leaves now.
			if err := rs.bindIdentity(ctx, ev); err != nil {
				return true, err
			}
			return false, rs.flush()
		}
	}
	if err := rs.bindIdentity(ctx, ev); err != nil {
		return true, err
	}
	rs.buf = rs.m.Map(rs.buf, ev)
	if st := ev.State(); st != "" {
		rs.lastState = st
	}
	if rs.r.a.generic {
		rs.noteGeneric(ev)
	}
	if inputs := rs.m.RequiredInputs(ev); len(inputs) > 0 {
		if err := rs.bindDeferred(ctx); err != nil {
			return true, err
		}
		rs.runCatchUp(ctx)
		return true, rs.commitInterrupt(ctx, inputs)
	}
	if !rs.hold || len(rs.buf) >= maxHeldEvents || stops(rs.lastState) {
		if err := rs.bindDeferred(ctx); err != nil {
			return true, err
		}
		soon := rs.midFrame && rs.streamed && len(rs.buf) < maxHeldEvents && !stops(rs.lastState)
		rs.streamed = rs.streamed || len(rs.buf) > 0
		if err := rs.write(soon); err != nil {
			return true, err
		}
	}
	rs.hold = false
	return stops(rs.lastState), nil
}

// flush writes the buffered events.
func (rs *runState) flush() error { return rs.write(false) }

// write hands the buffered events to the sink; soon lets a sink that can
// (soonSink) hold them up to midFrameDelay or until the next write.
func (rs *runState) write(soon bool) error {
	if len(rs.buf) == 0 {
		return nil
	}
	if rs.trace {
		rs.traceBatch(rs.buf)
	}
	var err error
	if ss, ok := rs.sink.(soonSink); ok && soon {
		err = ss.WriteBatchSoon(rs.buf, midFrameDelay)
	} else {
		err = rs.sink.WriteBatch(rs.buf)
	}
	if err == nil {
		rs.events += len(rs.buf)
	}
	clear(rs.buf)
	rs.buf = rs.buf[:0]
	if err != nil {
		return errClientGone
	}
	return nil
}

// end writes the closing events of a turn that ran to the end of its
// stream (protocol.md §4.4 step 7).
func (rs *runState) end(ctx context.Context) error {
	rs.runCatchUp(ctx)
	rs.sessionEvent()
	rs.buf = rs.m.CloseAll(rs.buf)
	switch rs.lastState {
	case a2a.StateCompleted, a2a.StateInputRequired:
		rs.outcome = RunOutcomeSuccess
		rs.buf = append(rs.buf, &agui.RunFinished{
			ThreadID: rs.r.in.ThreadID, RunID: rs.r.in.RunID,
			Outcome: agui.Outcome{Type: agui.OutcomeSuccess}, Usage: rs.m.Usage(),
		})
	case a2a.StateCanceled:
		rs.buf = append(rs.buf, rs.runError(CodeCancelled, i18n.MsgCancelled))
	default:
		msg := i18n.MsgA2AExecutionFailed
		if rs.agentError != "" {
			msg = rs.agentError // the generic agent's own words (generic.go)
		}
		rs.buf = append(rs.buf, rs.runError(CodeA2AExecutionFailed, msg))
	}
	rs.terminal = true
	rs.r.settle(ctx, rs)
	if rs.fenced && rs.outcome == RunOutcomeSuccess {
		// The closing write was refused: another replica owns the thread
		// now, so the run cannot claim success.
		rs.r.log.Warn("AG-UI thread taken over by another replica; the run ends")
		rs.buf[len(rs.buf)-1] = rs.runError(CodeOwnerUnavailable, i18n.MsgOwnerUnavailable)
	}
	return rs.flush()
}

// runError builds the run's terminal RUN_ERROR and records the outcome.
func (rs *runState) runError(code, msg string) *agui.RunError {
	rs.outcome, rs.code = RunOutcomeError, code
	return &agui.RunError{Code: code, Message: i18n.T(rs.r.lang, msg), Usage: rs.m.Usage()}
}

// fail turns the error a run ended with into its terminal event
// (protocol.md §4.4 step 8).
func (rs *runState) fail(ctx context.Context, err error) {
	if err == nil || errors.Is(err, errPaused) || rs.terminal {
		return
	}
	if rs.shutdownEnd(ctx, err) {
		return
	}
	if errors.Is(err, errClientGone) || ctx.Err() != nil {
		return // a disconnected client gets no event; release() cancels
	}
	if e, ok := asError(err); ok {
		ev := rs.runError(e.Code, e.Msg)
		if e.Details != nil {
			ev.Field, ev.Reason = e.Details.Field, e.Details.Reason
		}
		rs.buf = append(rs.buf, ev)
	} else if errors.Is(err, state.ErrFenced) {
		// Another replica took the thread while this run went on: it
		// fails closed, and its task here stops.
		rs.r.log.LogAttrs(ctx, slog.LevelWarn, "AG-UI thread taken over by another replica; the run ends", errAttr(err))
		rs.cancelTask(ctx)
		rs.buf = append(rs.buf, rs.runError(CodeOwnerUnavailable, i18n.MsgOwnerUnavailable))
	} else {
		rs.r.log.LogAttrs(ctx, slog.LevelError, "AG-UI A2A adapter run failed", errAttr(err))
		rs.cancelTask(ctx)
		rs.buf = append(rs.buf, rs.runError(CodeA2AUnavailable, i18n.MsgA2AUnavailable))
	}
	rs.terminal = true
	rs.r.settle(ctx, rs)
	_ = rs.flush()
}

// cancelTask cancels the execution's A2A task, ignoring errors.
func (rs *runState) cancelTask(ctx context.Context) {
	task := rs.r.a.view(rs.r.t).Execution.TaskID
	if task == nil && rs.seenTask != "" {
		task = &rs.seenTask
	}
	if task == nil || *task == "" {
		return
	}
	if err := rs.cancelA2ATask(ctx, *task); err != nil {
		rs.r.log.LogAttrs(ctx, slog.LevelDebug, "A2A CancelTask failed", slog.String("taskId", *task), errAttr(err))
	}
}

// cancelA2ATask asks A2A to cancel a task, even after the client left,
// waiting at most 10 s.
func (rs *runState) cancelA2ATask(ctx context.Context, task string) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err := rs.r.a.client.CancelTask(cctx, task)
	return err
}

// release settles a run that ends without having done so (a disconnect),
// then reports the run's end, once its last event was written.
func (r *Run) release(ctx context.Context, rs *runState) {
	r.settle(ctx, rs)
	rs.report()
	r.a.unpin(r.in.ThreadID, r.t)
}

// settle ends the run's hold on its thread: the execution is marked
// terminal when the run completed without a pending interrupt, a
// disconnected ordinary run cancels its A2A task, and the active run id is
// cleared (protocol.md §4.4 step 9, §9.1). It runs just before the terminal
// event is written, so a client that acts on RUN_FINISHED at once (an
// immediate resume) never meets THREAD_BUSY.
func (r *Run) settle(ctx context.Context, rs *runState) {
	if rs.settled {
		return
	}
	rs.settled = true
	t := r.t
	disconnected := !rs.terminal && !rs.paused
	pending := len(r.a.view(t).Execution.Pending) > 0
	if disconnected && !pending {
		rs.cancelTask(ctx)
	}
	if !rs.paused && !pending && !rs.stopped && (rs.terminal || disconnected) {
		seq, open := rs.m.PipelineSequence(), rs.m.DurableOpenSteps()
		_, err := r.a.update(ctx, t, func(doc *state.Thread) (*state.Thread, error) {
			if len(doc.Execution.Pending) > 0 || containsString(doc.TerminalExecutionIDs, doc.Execution.ExecutionID) {
				return nil, errNoChange
			}
			doc.Execution.PipelineSequence, doc.Execution.PipelineOpenSteps = seq, open
			doc.MarkTerminal()
			return doc, nil
		})
		if err != nil {
			// Best effort (protocol.md §11), except that a fenced write
			// means the thread moved: end() must not report success.
			r.log.Warn("Failed to persist AG-UI thread state", "error", err)
			rs.fenced = errors.Is(err, state.ErrFenced)
		}
	}
	t.mu.Lock()
	t.activeRun = ""
	t.noteInterruptRun(r.in.RunID, rs.paused)
	t.mu.Unlock()
	r.a.touch()
}
