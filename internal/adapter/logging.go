package adapter

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/reqid"
	"github.com/iac-code-agui/iac-code-agui/internal/tracing"
)

// Logging rules: a line names ids (request, thread, run, execution, task),
// kinds, states, codes and sizes. It never holds message text, tool
// arguments, answers, request metadata or any credential; A2A echoes the
// request metadata, keys included, into task history (protocol.md §11).

// reqLog is the adapter's logger with the request id of ctx, if any.
// Inside a traced request every line also carries the trace and span ids
// of ctx (tracing.Logger).
func (a *Adapter) reqLog(ctx context.Context) *slog.Logger {
	l := tracing.Logger(ctx, a.log)
	if id := reqid.From(ctx); id != "" {
		return l.With("requestId", id)
	}
	return l
}

// runLog is the logger of an admitted run: every line carries the request,
// thread, run and execution ids, and the rosInvocationId that the cancel
// route needs with the thread id (protocol.md §7.1).
func (a *Adapter) runLog(ctx context.Context, threadID, runID, executionID, rosInvocationID string) *slog.Logger {
	return a.reqLog(ctx).With("threadId", threadID, "runId", runID, "executionId", executionID, "rosInvocationId", rosInvocationID)
}

// errAttr renders err for a log line. An upstream JSON-RPC error keeps
// only its code: its message is A2A's text and may quote the request.
func errAttr(err error) slog.Attr {
	var rpc *a2a.RPCError
	if errors.As(err, &rpc) {
		return slog.String("error", "a2a: JSON-RPC error "+strconv.Itoa(rpc.Code))
	}
	return slog.String("error", err.Error())
}

// traceFrame logs one A2A event at debug level (--debug): its kind, ids,
// state and number of parts, never their content.
func (rs *runState) traceFrame(ev *a2a.Event) {
	parts := 0
	if ev.Message != nil {
		parts = len(ev.Message.Parts)
	}
	if ev.Status != nil && ev.Status.Message != nil {
		parts += len(ev.Status.Message.Parts)
	}
	rs.r.log.LogAttrs(context.Background(), slog.LevelDebug, "a2a frame",
		slog.String("kind", string(ev.Kind)),
		slog.String("taskId", ev.TaskID),
		slog.String("contextId", ev.ContextID),
		slog.String("state", ev.State()),
		slog.Int("parts", parts),
	)
}

// traceBatch logs one batch of AG-UI events written to the client at debug
// level: how many of each type, in order of first appearance.
func (rs *runState) traceBatch(evs []agui.Event) {
	var b strings.Builder
	last, n := agui.EventType(""), 0
	emit := func() {
		if n == 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(last))
		if n > 1 {
			b.WriteByte('*')
			b.WriteString(strconv.Itoa(n))
		}
	}
	for _, ev := range evs {
		if t := ev.EventType(); t != last {
			emit()
			last, n = t, 0
		}
		n++
	}
	emit()
	rs.r.log.LogAttrs(context.Background(), slog.LevelDebug, "agui events",
		slog.Int("count", len(evs)), slog.String("types", b.String()))
}
