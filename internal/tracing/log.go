package tracing

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Log attribute keys of the trace a line was written in.
const (
	LogTraceID = "trace_id"
	LogSpanID  = "span_id"
)

// LogHandler adds trace_id and span_id to every record whose context
// carries a valid span (text and JSON alike); other records pass as they
// are.
func LogHandler(h slog.Handler) slog.Handler { return &logHandler{h} }

// Logger returns l with LogHandler when tracing is on, l itself when off
// (no span ever exists then, and the wrapper would cost an allocation per
// logger a request derives).
func (t *Tracing) Logger(l *slog.Logger) *slog.Logger {
	if t == nil {
		return l
	}
	return slog.New(LogHandler(l.Handler()))
}

type logHandler struct{ h slog.Handler }

func (l *logHandler) Enabled(ctx context.Context, lv slog.Level) bool { return l.h.Enabled(ctx, lv) }

func (l *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String(LogTraceID, sc.TraceID().String()), slog.String(LogSpanID, sc.SpanID().String()))
	}
	return l.h.Handle(ctx, r)
}

func (l *logHandler) WithAttrs(as []slog.Attr) slog.Handler { return &logHandler{l.h.WithAttrs(as)} }
func (l *logHandler) WithGroup(name string) slog.Handler    { return &logHandler{l.h.WithGroup(name)} }

// Logger returns l bound to the span of ctx: a line it writes with a
// context that carries no span (slog's Info, Warn, …) is logged as if
// written with ctx. l itself when ctx carries no span, so a logger made
// per request costs nothing while tracing is off.
func Logger(ctx context.Context, l *slog.Logger) *slog.Logger {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return l
	}
	return slog.New(&boundHandler{h: l.Handler(), sc: sc})
}

type boundHandler struct {
	h  slog.Handler
	sc trace.SpanContext
}

func (b *boundHandler) Enabled(ctx context.Context, lv slog.Level) bool { return b.h.Enabled(ctx, lv) }

func (b *boundHandler) Handle(ctx context.Context, r slog.Record) error {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, b.sc)
	}
	return b.h.Handle(ctx, r)
}

func (b *boundHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &boundHandler{h: b.h.WithAttrs(as), sc: b.sc}
}

func (b *boundHandler) WithGroup(name string) slog.Handler {
	return &boundHandler{h: b.h.WithGroup(name), sc: b.sc}
}
