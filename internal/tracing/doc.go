// Package tracing owns OpenTelemetry tracing: it reads the SDK's standard
// OTEL_* environment variables, builds the tracer providers, the OTLP
// exporter (http/protobuf or grpc) behind a batch processor, and the
// propagators, and it offers the few wrappers the app puts around the
// parts that meet a request: the HTTP handler and transports (W3C trace
// context in and out), the thread store (load and save spans) and the log
// handler (trace_id and span_id on every line written inside a span).
//
// Tracing is off unless OTEL_TRACES_EXPORTER names otlp: then every
// wrapper returns what it was given and no span is ever made, so the hot
// path pays nothing. Only traces are exported, whatever OTEL_METRICS_EXPORTER
// and OTEL_LOGS_EXPORTER say.
//
// It must not know AG-UI or A2A, and it must never block or fail a
// request: an unreachable or slow collector costs spans (counted through
// Options.Failed), never a run. Attributes it sets carry no secret, no
// header and no message text.
package tracing
