package adapter

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
	"github.com/iac-code-agui/iac-code-agui/internal/projection"
	"github.com/iac-code-agui/iac-code-agui/internal/tracing"
)

// Spans (Options.Tracer): the admission and the run, each with the
// Observer's facts as attributes, and events for state conflicts,
// interrupts raised and answers applied. They are made at the Observer's
// hook points and carry ids, kinds, codes and counts only: never message
// text, tool arguments, answers, request metadata or a credential.

// Span attribute keys.
const (
	attrThreadID     = "iac_code_agui.thread.id"
	attrRunID        = "iac_code_agui.run.id"
	attrExecutionID  = "iac_code_agui.execution.id"
	attrRunKind      = "iac_code_agui.run.kind"
	attrOutcome      = "iac_code_agui.run.outcome"
	attrErrorCode    = "iac_code_agui.error.code"
	attrEvents       = "iac_code_agui.run.events"
	attrFirstEvent   = "iac_code_agui.run.first_event_ms"
	attrRefusal      = "iac_code_agui.admission.refusal"
	attrInterruptID  = "iac_code_agui.interrupt.id"
	attrInputKind    = "iac_code_agui.interrupt.kind"
	attrConflictTry  = "iac_code_agui.state.conflict_retry"
	attrAnswerStatus = "iac_code_agui.answer.status"
)

// offSpan stands for every span while tracing is off: one value, so no
// span costs an allocation.
var offSpan trace.Span = noop.Span{}

// startSpan opens a span of the adapter's tracer, or returns ctx and
// offSpan when tracing is off.
func (a *Adapter) startSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	if a.tracer == nil {
		return ctx, offSpan
	}
	return a.tracer.Start(ctx, name)
}

// traceAdmission records the admission's answer on its span.
func (a *Adapter) traceAdmission(span trace.Span, req Request, run *Run, code string) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String(attrThreadID, req.Input.ThreadID), attribute.String(attrRunID, req.Input.RunID))
	if code != "" {
		span.SetAttributes(attribute.String(attrRefusal, code))
		span.SetStatus(codes.Error, code)
		return
	}
	if run != nil {
		if doc := a.view(run.t); doc != nil {
			span.SetAttributes(attribute.String(attrExecutionID, doc.Execution.ExecutionID))
		}
	}
}

// traceRunEnd records the Observer's facts of a run on its span and ends it.
func (rs *runState) traceRunEnd(outcome string, d time.Duration) {
	span := rs.span
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(
		attribute.String(attrThreadID, rs.r.in.ThreadID),
		attribute.String(attrRunID, rs.r.in.RunID),
		attribute.String(attrRunKind, rs.kind()),
		attribute.String(attrOutcome, outcome),
		attribute.Int(attrEvents, rs.events),
		attribute.Float64("iac_code_agui.run.duration_ms", float64(d.Microseconds())/1000),
	)
	if rs.firstEvent > 0 {
		span.SetAttributes(attribute.Float64(attrFirstEvent, float64(rs.firstEvent.Microseconds())/1000))
	}
	if rs.code != "" {
		span.SetAttributes(attribute.String(attrErrorCode, rs.code))
		span.SetStatus(codes.Error, rs.code)
	}
	span.End()
}

// traceInterrupts adds one event per interrupt made durable to ctx's span.
func traceInterrupts(ctx context.Context, inputs []mapper.Input) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	for _, in := range inputs {
		span.AddEvent("interrupt raised", trace.WithAttributes(
			attribute.String(attrInterruptID, in.ID),
			attribute.String(attrInputKind, string(projection.KindOf(in.Projection)))))
	}
}

// traceAnswers adds one event per answer made durable to ctx's span.
func traceAnswers(ctx context.Context, all []answer) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	for _, x := range all {
		span.AddEvent("answer applied", trace.WithAttributes(
			attribute.String(attrInterruptID, x.entry.InterruptID),
			attribute.String(attrAnswerStatus, answerStatus(x.entry.Status))))
	}
}

// traceConflict notes on ctx's span that a save met a newer stored
// revision and the thread is reloaded for retry n.
func traceConflict(ctx context.Context, n int) {
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		span.AddEvent("state conflict; reloading", trace.WithAttributes(attribute.Int(attrConflictTry, n)))
	}
}

// answerStatus is a resume entry's status, one of two values.
func answerStatus(s string) string {
	if s == agui.ResumeResolved || s == agui.ResumeCancelled {
		return s
	}
	return "other"
}

// startSpan opens the run's span under ctx, the request's, and returns
// the context the run goes on with: its upstream calls and state writes
// are the span's children, and its log lines carry the span's ids.
func (rs *runState) startSpan(ctx context.Context) context.Context {
	if rs.r.a.tracer == nil {
		return ctx
	}
	ctx, rs.span = rs.r.a.tracer.Start(ctx, "agui.run", trace.WithAttributes(attribute.String(attrRunKind, rs.kind())))
	rs.r.log = tracing.Logger(ctx, rs.r.log)
	return ctx
}
