package demoagent

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// Tracing (Options.TracerProvider, Options.Propagator): the agent
// continues the caller's trace. Every request is a server span, a child
// of the span its traceparent names, and every JSON-RPC call a span of
// its method inside it (for a stream, as long as the stream), so that one
// trace shows the agent's side of a turn. Spans name methods, routes and
// task ids only.

// tracedHandler wraps the agent in its server spans, or returns it as it
// is when the options carry no tracing.
func tracedHandler(ag *Agent) http.Handler {
	o := ag.opts
	if o.TracerProvider == nil || o.Propagator == nil {
		return ag
	}
	return otelhttp.NewHandler(ag, "demo-agent",
		otelhttp.WithTracerProvider(o.TracerProvider),
		otelhttp.WithPropagators(o.Propagator),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			switch r.URL.Path {
			case "/", "/health", "/.well-known/agent-card.json", "/iac-code/pipeline/state", "/iac-code/session/ensure-restored":
				return "demo-agent " + r.Method + " " + r.URL.Path
			}
			return "demo-agent " + r.Method
		}),
	)
}

// traceMethod opens the span of one JSON-RPC call (a method of
// methods10); the caller ends it. r is returned with the span's context.
func (a *Agent) traceMethod(r *http.Request, method string) (*http.Request, trace.Span) {
	if a.tracer == nil {
		return r, nil
	}
	ctx, span := a.tracer.Start(r.Context(), "demo-agent "+method,
		trace.WithAttributes(attribute.String("rpc.system", "jsonrpc"), attribute.String("rpc.method", method)))
	return r.WithContext(ctx), span
}
