package tracing

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
)

// noopMeters keeps otelhttp's own metrics out: the gateway's metrics are
// on /metrics, and nothing but traces is exported.
var noopMeters = metricnoop.NewMeterProvider()

// Handler wraps the gateway's handler in a server span per request that
// traced accepts, a child of the client's span when the request carries
// traceparent (and tracestate). name gives the span's name from the
// request, before it is served; it must not return the raw path of an
// unknown route. The
// wrapped writer keeps http.Flusher and Unwrap, so SSE flushing and
// http.ResponseController still reach the connection. h itself when off.
func (t *Tracing) Handler(h http.Handler, name func(*http.Request) string, traced func(*http.Request) bool) http.Handler {
	if t == nil {
		return h
	}
	return otelhttp.NewHandler(h, "http",
		otelhttp.WithTracerProvider(t.main),
		otelhttp.WithPropagators(t.prop),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return name(r) }),
		otelhttp.WithFilter(otelhttp.Filter(traced)),
		otelhttp.WithMeterProvider(noopMeters),
	)
}

// ForwardTransport wraps rt so that each request it sends is a client span whose
// context goes out as traceparent: the request forwarded to the owning
// replica stays in the client's trace. rt itself when off.
func (t *Tracing) ForwardTransport(rt http.RoundTripper) http.RoundTripper {
	if t == nil {
		return rt
	}
	return otelhttp.NewTransport(rt,
		otelhttp.WithTracerProvider(t.main),
		otelhttp.WithPropagators(t.prop),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "forward " + r.Method }),
		otelhttp.WithMeterProvider(noopMeters),
	)
}
