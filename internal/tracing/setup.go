package tracing

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// DefaultServiceName is service.name when neither OTEL_SERVICE_NAME nor
// OTEL_RESOURCE_ATTRIBUTES names one.
const DefaultServiceName = "iac-code-agui"

// Options are what Setup needs besides the environment.
type Options struct {
	// ServiceName is the default service.name (DefaultServiceName when
	// empty); OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override it.
	ServiceName string
	// Version becomes service.version.
	Version string
	// Logger gets the setup's warnings and the exporter's errors.
	Logger *slog.Logger
	// Failed, when set, is told how many spans an export failed to
	// deliver (the /metrics counter).
	Failed func(spans int)
}

// Tracing is the process's tracing: off (the zero value, and what Setup
// returns without an exporter) or on with one exporter shared by its
// tracer providers. Its methods are safe on a nil *Tracing.
type Tracing struct {
	exporter sdktrace.SpanExporter
	res      *resource.Resource
	prop     propagation.TextMapPropagator

	mu        sync.Mutex
	providers []*sdktrace.TracerProvider
	main      *sdktrace.TracerProvider
}

// Off is tracing switched off.
var Off = (*Tracing)(nil)

// Setup reads the environment through getenv and returns the process's
// tracing, off unless OTEL_TRACES_EXPORTER asks for otlp (and
// OTEL_SDK_DISABLED is not true). Unsupported values are warned about
// and ignored, as the OpenTelemetry specification asks, never fatal: a
// gateway must start whatever its tracing configuration. The OTLP
// exporter itself reads OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout,
// compression, certificates), the batch processor OTEL_BSP_* and the
// sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG from the process
// environment.
func Setup(ctx context.Context, getenv func(string) string, o Options) *Tracing {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return Off
	}
	if !wantsOTLP(getenv("OTEL_TRACES_EXPORTER"), log) {
		return Off
	}
	exp, err := newExporter(ctx, getenv, log)
	if err != nil {
		log.Warn("Tracing is off: the OTLP exporter could not be built", "error", err.Error())
		return Off
	}
	// The exporter's errors (an unreachable collector) go to the process
	// log instead of the SDK's default stderr logger.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("Trace export failed; spans dropped", "error", err.Error())
	}))
	name := o.ServiceName
	if name == "" {
		name = DefaultServiceName
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if o.Version != "" {
		attrs = append(attrs, attribute.String("service.version", o.Version))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		// A malformed OTEL_RESOURCE_ATTRIBUTES: keep what parsed.
		log.Warn("OTEL_RESOURCE_ATTRIBUTES partly ignored", "error", err.Error())
	}
	if res == nil {
		res = resource.NewSchemaless(attrs...)
	}
	t := &Tracing{
		exporter: &countingExporter{SpanExporter: exp, failed: o.Failed},
		res:      res,
		prop:     propagators(getenv("OTEL_PROPAGATORS"), log),
	}
	t.main = t.newProvider(res)
	return t
}

// wantsOTLP reads OTEL_TRACES_EXPORTER: a comma-separated list in which
// otlp turns tracing on; unset, empty or none leave it off.
func wantsOTLP(v string, log *slog.Logger) bool {
	on := false
	for _, name := range strings.Split(v, ",") {
		switch name = strings.ToLower(strings.TrimSpace(name)); name {
		case "otlp":
			on = true
		case "", "none":
		default:
			log.Warn("OTEL_TRACES_EXPORTER value not supported; ignored", "exporter", name)
		}
	}
	return on
}

// newExporter builds the OTLP exporter of the configured protocol
// (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else http/protobuf). Neither dials before its first export.
func newExporter(ctx context.Context, getenv func(string) string, log *slog.Logger) (sdktrace.SpanExporter, error) {
	proto := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if proto == "" {
		proto = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	switch proto {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	}
	log.Warn("OTEL_EXPORTER_OTLP_PROTOCOL value not supported", "protocol", proto)
	return nil, errors.New("unsupported OTLP protocol " + proto)
}

// newProvider is a tracer provider of res on the shared exporter, behind
// its own batch processor (which reads OTEL_BSP_*); the sampler is the
// SDK's, from OTEL_TRACES_SAMPLER, parent-based always-on by default.
func (t *Tracing) newProvider(res *resource.Resource) *sdktrace.TracerProvider {
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(sharedExporter{t.exporter}),
		sdktrace.WithResource(res),
	)
	t.mu.Lock()
	t.providers = append(t.providers, tp)
	t.mu.Unlock()
	return tp
}

// Enabled reports whether spans are made and exported.
func (t *Tracing) Enabled() bool { return t != nil }

// TracerProvider is the gateway's provider; a no-op one when off.
func (t *Tracing) TracerProvider() trace.TracerProvider {
	if t == nil {
		return noop.NewTracerProvider()
	}
	return t.main
}

// Tracer is the gateway's tracer of the named component, or nil when
// tracing is off (callers skip their spans on nil).
func (t *Tracing) Tracer(component string) trace.Tracer {
	if t == nil {
		return nil
	}
	return t.main.Tracer(scopePrefix + component)
}

// scopePrefix starts every instrumentation scope name.
const scopePrefix = "github.com/iac-code-agui/iac-code-agui/"

// ServiceProvider is a provider for another service in this process (the
// embedded demo agent), on the same exporter: its spans show in the
// backend under serviceName. A no-op provider when off.
func (t *Tracing) ServiceProvider(serviceName string) trace.TracerProvider {
	if t == nil {
		return noop.NewTracerProvider()
	}
	res, err := resource.Merge(t.res, resource.NewSchemaless(attribute.String("service.name", serviceName)))
	if err != nil {
		res = t.res
	}
	return t.newProvider(res)
}

// Propagator is the configured propagator (OTEL_PROPAGATORS), or nil
// when tracing is off.
func (t *Tracing) Propagator() propagation.TextMapPropagator {
	if t == nil {
		return nil
	}
	return t.prop
}

// ShutdownTimeout bounds the final flush: a stopping process waits no
// longer than this for an unreachable collector.
const ShutdownTimeout = 5 * time.Second

// Shutdown flushes the spans still queued and stops the exporter,
// waiting at most ShutdownTimeout.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	t.mu.Lock()
	providers := t.providers
	t.mu.Unlock()
	var errs []error
	for _, tp := range providers {
		errs = append(errs, tp.Shutdown(ctx))
	}
	errs = append(errs, t.exporter.Shutdown(ctx))
	return errors.Join(errs...)
}

// countingExporter counts the spans of every failed export.
type countingExporter struct {
	sdktrace.SpanExporter
	failed func(int)
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil && e.failed != nil {
		e.failed(len(spans))
	}
	return err
}

// sharedExporter is the exporter as each provider's batch processor sees
// it: their shutdowns flush, and Tracing.Shutdown stops the exporter once.
type sharedExporter struct{ sdktrace.SpanExporter }

func (sharedExporter) Shutdown(context.Context) error { return nil }
