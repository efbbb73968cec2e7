package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// env is a getenv over m; Setup's exporters and resource read the
// process environment, which the tests set with t.Setenv.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// closedEndpoint is an OTLP endpoint nothing listens on.
func closedEndpoint(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return "http://127.0.0.1:" + strconv.Itoa(port)
}

func TestOffUnlessOTLP(t *testing.T) {
	for name, m := range map[string]map[string]string{
		"unset":           {},
		"none":            {"OTEL_TRACES_EXPORTER": "none"},
		"sdk disabled":    {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "TRUE"},
		"unsupported":     {"OTEL_TRACES_EXPORTER": "zipkin,console"},
		"bad protocol":    {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
		"metrics only":    {"OTEL_METRICS_EXPORTER": "otlp", "OTEL_LOGS_EXPORTER": "otlp"},
		"traces protocol": {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			tr := Setup(t.Context(), env(m), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if tr.Enabled() {
				t.Fatal("tracing on")
			}
			// Off, every wrapper hands back what it was given.
			h := &http.ServeMux{}
			if got := tr.Handler(h, nil, nil); got != http.Handler(h) {
				t.Error("Handler wrapped")
			}
			if tr.ForwardTransport(http.DefaultTransport) != http.DefaultTransport {
				t.Error("ForwardTransport wrapped")
			}
			st := state.NewMemStore()
			if tr.Store(st, "file") != state.Store(st) {
				t.Error("Store wrapped")
			}
			if tr.Tracer("x") != nil || tr.Propagator() != nil {
				t.Error("a tracer or a propagator while off")
			}
			if err := tr.Shutdown(t.Context()); err != nil {
				t.Error(err)
			}
			if name == "unsupported" || name == "bad protocol" {
				if !strings.Contains(logs.String(), "not supported") {
					t.Errorf("no warning: %q", logs.String())
				}
			}
		})
	}
}

func TestResourceAndSampler(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", closedEndpoint(t))
	on := map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}
	tr := Setup(t.Context(), env(on), Options{Version: "1.2.3"})
	defer tr.Shutdown(context.Background())
	if !tr.Enabled() {
		t.Fatal("tracing off")
	}
	if got := attr(tr, "service.name"); got != DefaultServiceName {
		t.Errorf("service.name %q", got)
	}
	if got := attr(tr, "service.version"); got != "1.2.3" {
		t.Errorf("service.version %q", got)
	}
	// Parent-based always-on: a root is sampled, a child follows its
	// parent's flag.
	_, span := tr.Tracer("test").Start(t.Context(), "root")
	if !span.SpanContext().IsSampled() {
		t.Error("a root span is not sampled")
	}
	span.End()
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Remote: true})
	_, child := tr.Tracer("test").Start(trace.ContextWithRemoteSpanContext(t.Context(), parent), "child")
	if child.SpanContext().IsSampled() {
		t.Error("the child of an unsampled parent is sampled")
	}
	child.End()

	t.Setenv("OTEL_SERVICE_NAME", "gw-eu")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=prod")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	tr2 := Setup(t.Context(), env(on), Options{})
	defer tr2.Shutdown(context.Background())
	if got := attr(tr2, "service.name"); got != "gw-eu" {
		t.Errorf("OTEL_SERVICE_NAME: service.name %q", got)
	}
	if got := attr(tr2, "deployment.environment"); got != "prod" {
		t.Errorf("OTEL_RESOURCE_ATTRIBUTES: %q", got)
	}
	if _, s := tr2.Tracer("test").Start(t.Context(), "root"); s.IsRecording() {
		t.Error("OTEL_TRACES_SAMPLER=always_off records")
	}
}

func attr(tr *Tracing, key string) string {
	v, _ := tr.res.Set().Value(attribute.Key(key))
	return v.String()
}

// withBaggage adds one baggage member to ctx.
func withBaggage(t *testing.T, ctx context.Context) context.Context {
	m, err := baggage.NewMember("tenant", "t1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := baggage.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return baggage.ContextWithBaggage(ctx, b)
}

func TestPropagators(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(t.Context(), sc)
	for v, want := range map[string]string{
		"":                   "baggage,traceparent",
		"tracecontext":       "traceparent",
		"none":               "",
		"b3, tracecontext":   "traceparent",
		"baggage,baggage":    "baggage",
		"tracecontext,NONE ": "",
	} {
		h := http.Header{}
		propagators(v, slog.New(slog.DiscardHandler)).Inject(withBaggage(t, ctx), propagation.HeaderCarrier(h))
		var got []string
		for _, k := range []string{"Baggage", "Traceparent"} {
			if h.Get(k) != "" {
				got = append(got, strings.ToLower(k))
			}
		}
		if strings.Join(got, ",") != want {
			t.Errorf("OTEL_PROPAGATORS=%q: injected %v, want %s", v, got, want)
		}
	}
}

func TestLogHandler(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0xab, 1}, SpanID: trace.SpanID{0xcd, 2}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(t.Context(), sc)
	for _, format := range []string{"text", "json"} {
		var b bytes.Buffer
		var h slog.Handler = slog.NewTextHandler(&b, nil)
		if format == "json" {
			h = slog.NewJSONHandler(&b, nil)
		}
		l := slog.New(LogHandler(h)).With("session", "s")
		l.InfoContext(ctx, "in a span")
		l.Info("outside")
		Logger(ctx, l).With("k", "v").Info("bound")
		Logger(t.Context(), l).Info("bound to nothing")
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		if len(lines) != 4 {
			t.Fatalf("%s: %d lines", format, len(lines))
		}
		for i, want := range []bool{true, false, true, false} {
			got := traceOf(t, format, lines[i])
			if want && got != sc.TraceID().String()+"/"+sc.SpanID().String() || !want && got != "/" {
				t.Errorf("%s line %d: trace %q: %s", format, i, got, lines[i])
			}
		}
	}
}

// traceOf reads "trace_id/span_id" from a log line.
func traceOf(t *testing.T, format, line string) string {
	if format == "json" {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		tid, _ := m[LogTraceID].(string)
		sid, _ := m[LogSpanID].(string)
		return tid + "/" + sid
	}
	field := func(k string) string {
		_, rest, ok := strings.Cut(line, " "+k+"=")
		if !ok {
			return ""
		}
		v, _, _ := strings.Cut(rest, " ")
		return v
	}
	return field(LogTraceID) + "/" + field(LogSpanID)
}

// TestFailedExportsCounted: spans an unreachable collector never got are
// counted, and the final flush ends within its bound.
func TestFailedExportsCounted(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", closedEndpoint(t))
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "200")
	var failed atomic.Int64
	tr := Setup(t.Context(), env(map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}), Options{
		Logger: slog.New(slog.DiscardHandler), Failed: func(n int) { failed.Add(int64(n)) }})
	for range 3 {
		_, s := tr.Tracer("test").Start(t.Context(), "lost")
		s.End()
	}
	_ = tr.Shutdown(t.Context()) // the flush fails: the collector is gone
	if got := failed.Load(); got != 3 {
		t.Fatalf("%d spans counted as dropped, want 3", got)
	}
}
