package adapter

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// errShuttingDown is the cause of a run context that StopRuns cancelled.
var errShuttingDown = errors.New("the adapter is shutting down")

// stopper is the adapter's part of a graceful shutdown (app.serve): Drain
// when it begins, StopRuns when its grace for open runs is over
// (docs/decisions.md, "A run the shutdown ends").
type stopper struct {
	draining atomic.Bool
	once     sync.Once
	ctx      context.Context // done at StopRuns
	cancel   context.CancelFunc
}

func newStopper() *stopper {
	ctx, cancel := context.WithCancel(context.Background())
	return &stopper{ctx: ctx, cancel: cancel}
}

// Drain tells the adapter that the server is shutting down: from now on,
// a run whose upstream fails (an A2A child stopped by the same signal)
// ends ADAPTER_SHUTTING_DOWN, like one StopRuns ends, instead of
// A2A_UNAVAILABLE.
func (a *Adapter) Drain() { a.stop.draining.Store(true) }

// StopRuns ends every run still streaming with RUN_ERROR
// ADAPTER_SHUTTING_DOWN (also Drain). Their A2A tasks are not cancelled
// and their executions stay open, so the same request made again in a
// new run, on this server's next process, continues the thread: a resume
// that was accepted follows its task (protocol.md §5.6 step 1), a new
// turn cancels the task it leaves behind first (§3.6). Runs admitted
// later end the same way at once.
func (a *Adapter) StopRuns() {
	a.Drain()
	a.stop.once.Do(a.stop.cancel)
}

// stoppable returns the run's context: ctx, also cancelled, with the
// cause errShuttingDown, by StopRuns. done must be called when the run
// ends.
func (a *Adapter) stoppable(ctx context.Context) (run context.Context, done func()) {
	run, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(a.stop.ctx, func() { cancel(errShuttingDown) })
	return run, func() { stop(); cancel(nil) }
}

// shutdownEnd reports whether err ended the run because the server shuts
// down: StopRuns cancelled it, or the upstream failed while draining. The
// run then ends ADAPTER_SHUTTING_DOWN, logged as a warning: an operator's
// stop is no failure of the run.
func (rs *runState) shutdownEnd(ctx context.Context, err error) bool {
	stopped := errors.Is(context.Cause(ctx), errShuttingDown)
	if !stopped {
		// Only a bare upstream failure: our own errors and a fenced write
		// keep their codes.
		_, ours := asError(err)
		if ours || errors.Is(err, state.ErrFenced) || errors.Is(err, errClientGone) || ctx.Err() != nil || !rs.r.a.stop.draining.Load() {
			return false
		}
	}
	attrs := []slog.Attr{slog.String("code", CodeShuttingDown)}
	if !stopped {
		attrs = append(attrs, errAttr(err))
	}
	rs.r.log.LogAttrs(ctx, slog.LevelWarn, "AG-UI run ended by the shutdown; the thread stays resumable", attrs...)
	rs.stopped = true
	rs.buf = append(rs.buf, rs.runError(CodeShuttingDown, i18n.MsgShuttingDown))
	rs.terminal = true
	rs.r.settle(context.WithoutCancel(ctx), rs)
	_ = rs.flush()
	return true
}
