package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const namespace = "iac_code_agui"

// Routes of the HTTP request counter (ObserveHTTP).
const (
	RouteRun       = "run"
	RouteCancel    = "cancel"
	RouteSubscribe = "subscribe"
	RouteHealth    = "health"
	RouteMetrics   = "metrics"
	RouteOther     = "other"
)

// other replaces a label value outside its bounded set.
const other = "other"

// Runs last from milliseconds (an admission error streamed at once) to the
// A2A client's one-hour timeout (protocol.md §11).
var runBuckets = []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// A state write is a small file written and synced; seconds mean a sick disk.
var writeBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// Metrics holds the adapter's series and their registry. It implements
// adapter.Observer and is safe for concurrent use.
type Metrics struct {
	reg           *prometheus.Registry
	runsStarted   *prometheus.CounterVec
	runs          *prometheus.CounterVec
	active        prometheus.Gauge
	runDuration   *prometheus.HistogramVec
	events        prometheus.Counter
	interrupts    *prometheus.CounterVec
	admission     *prometheus.CounterVec
	stateWrites   *prometheus.CounterVec
	stateWriteDur prometheus.Histogram
	httpRequests  *prometheus.CounterVec
	spansDropped  prometheus.Counter
	handler       http.Handler
	gaugesOnce    sync.Once // ServerGauges
}

// New builds the metrics on a registry of their own, so that tests and
// several servers in one process never share or collide on series.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg}
	m.runsStarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "runs_started_total", Help: "AG-UI runs that started streaming, by kind (new or resume).",
	}, []string{"kind"})
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "runs_total", Help: "AG-UI runs that ended, by kind, outcome and RUN_ERROR code.",
	}, []string{"kind", "outcome", "code"})
	m.active = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "active_runs", Help: "AG-UI runs streaming now.",
	})
	m.runDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "run_duration_seconds", Help: "Duration of AG-UI runs, from admission to the last event.",
		Buckets: runBuckets,
	}, []string{"kind", "outcome"})
	m.events = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "events_total", Help: "AG-UI events written to clients.",
	})
	m.interrupts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "interrupts_total", Help: "Interrupts made durable, by input kind.",
	}, []string{"kind"})
	m.admission = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "admission_rejections_total", Help: "Requests refused by admission, by error code.",
	}, []string{"code"})
	m.stateWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "state_writes_total", Help: "Thread state writes, by result (ok or error).",
	}, []string{"result"})
	m.stateWriteDur = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "state_write_duration_seconds", Help: "Duration of thread state writes.",
		Buckets: writeBuckets,
	})
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "http_requests_total", Help: "HTTP requests answered, by route and status code.",
	}, []string{"route", "code"})
	m.spansDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "trace_spans_dropped_total",
		Help: "Trace spans the OTLP exporter failed to deliver (collector unreachable, refusing or too slow); 0 while tracing is off.",
	})
	// The names are constants on a fresh registry: registration cannot fail.
	reg.MustRegister(
		m.runsStarted, m.runs, m.active, m.runDuration, m.events, m.interrupts,
		m.admission, m.stateWrites, m.stateWriteDur, m.httpRequests, m.spansDropped,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// Series that a dashboard divides by exist from the start, at zero.
	for _, k := range []string{kindNew, kindResume, kindGuidance} {
		m.runsStarted.WithLabelValues(k)
	}
	for _, r := range []string{"ok", "error"} {
		m.stateWrites.WithLabelValues(r)
	}
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

// ServerGauges adds the HTTP server's gauges, read when scraped: the open
// run and observation streams and the bytes of
// request bodies being read or decoded, which share the body budget
// (protocol.md §2.5). Only the first call on m adds them.
func (m *Metrics) ServerGauges(openStreams, bodyBytes func() float64) {
	m.gaugesOnce.Do(func() {
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Namespace: namespace, Name: "open_streams", Help: "Run and observation streams open now.",
			}, openStreams),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Namespace: namespace, Name: "request_body_bytes", Help: "Bytes of request bodies being read or decoded now (they share the body budget).",
			}, bodyBytes),
		)
	})
}

// Registry returns the registry, for a caller that adds its own series.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler { return m.handler }

// ObserveHTTP counts one answered request. route is one of the Route
// constants (others count as "other"); status is the HTTP status sent.
func (m *Metrics) ObserveHTTP(route string, status int) {
	switch route {
	case RouteRun, RouteCancel, RouteSubscribe, RouteHealth, RouteMetrics:
	default:
		route = RouteOther
	}
	code := other
	if status >= 100 && status <= 599 {
		code = strconv.Itoa(status)
	}
	m.httpRequests.WithLabelValues(route, code).Inc()
}

// RunStarted implements adapter.Observer.
func (m *Metrics) RunStarted(kind string) {
	m.runsStarted.WithLabelValues(runKind(kind)).Inc()
	m.active.Inc()
}

// RunEnded implements adapter.Observer.
func (m *Metrics) RunEnded(kind, outcome, code string, events int, d time.Duration) {
	kind, outcome = runKind(kind), runOutcome(outcome)
	m.runs.WithLabelValues(kind, outcome, errorCode(code)).Inc()
	m.runDuration.WithLabelValues(kind, outcome).Observe(d.Seconds())
	if events > 0 {
		m.events.Add(float64(events))
	}
	// Last, though a scrape may still see the gauge's decrement without
	// the counts above: the registry collects its metrics concurrently.
	m.active.Dec()
}

// Interrupt implements adapter.Observer.
func (m *Metrics) Interrupt(kind string) { m.interrupts.WithLabelValues(inputKind(kind)).Inc() }

// AdmissionRejected implements adapter.Observer.
func (m *Metrics) AdmissionRejected(code string) {
	m.admission.WithLabelValues(errorCode(code)).Inc()
}

// StateWrite implements adapter.Observer.
func (m *Metrics) StateWrite(err error, d time.Duration) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.stateWrites.WithLabelValues(result).Inc()
	m.stateWriteDur.Observe(d.Seconds())
}

// TraceSpansDropped counts spans an export failed to deliver
// (tracing.Options.Failed).
func (m *Metrics) TraceSpansDropped(n int) {
	if n > 0 {
		m.spansDropped.Add(float64(n))
	}
}
