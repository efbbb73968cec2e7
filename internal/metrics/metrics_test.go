package metrics_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/metrics"
	"github.com/iac-code-agui/iac-code-agui/internal/projection"
)

// The adapter depends on this: Metrics is its Observer.
var _ adapter.Observer = (*metrics.Metrics)(nil)

// scrape reads the exposition over real loopback HTTP, as Prometheus does.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("scrape: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	return string(b)
}

func assertLines(t *testing.T, body string, want ...string) {
	t.Helper()
	lines := map[string]bool{}
	for _, l := range strings.Split(body, "\n") {
		lines[l] = true
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("missing line %q", w)
		}
	}
}

func TestObserverSeries(t *testing.T) {
	m := metrics.New()
	m.RunStarted(adapter.RunKindNew)
	m.RunStarted(adapter.RunKindNew)
	m.RunStarted(adapter.RunKindResume)
	m.RunEnded(adapter.RunKindNew, adapter.RunOutcomeSuccess, "", 7, 2*time.Second)
	m.RunEnded(adapter.RunKindNew, adapter.RunOutcomeError, "A2A_EXECUTION_FAILED", 3, 30*time.Millisecond)
	m.Interrupt("permission")
	m.Interrupt("permission")
	m.AdmissionRejected("THREAD_BUSY")
	m.StateWrite(nil, 2*time.Millisecond)
	m.StateWrite(errors.New("disk full"), 20*time.Millisecond)
	m.ObserveHTTP(metrics.RouteRun, 200)
	m.ObserveHTTP(metrics.RouteRun, 409)
	m.ObserveHTTP(metrics.RouteHealth, 200)

	assertLines(t, scrape(t, m),
		`iac_code_agui_runs_started_total{kind="new"} 2`,
		`iac_code_agui_runs_started_total{kind="resume"} 1`,
		`iac_code_agui_active_runs 1`,
		`iac_code_agui_runs_total{code="",kind="new",outcome="success"} 1`,
		`iac_code_agui_runs_total{code="A2A_EXECUTION_FAILED",kind="new",outcome="error"} 1`,
		`iac_code_agui_events_total 10`,
		// 2 s falls in (1, 2.5], 30 ms in (0.025, 0.1].
		`iac_code_agui_run_duration_seconds_bucket{kind="new",outcome="success",le="1"} 0`,
		`iac_code_agui_run_duration_seconds_bucket{kind="new",outcome="success",le="2.5"} 1`,
		`iac_code_agui_run_duration_seconds_bucket{kind="new",outcome="success",le="3600"} 1`,
		`iac_code_agui_run_duration_seconds_sum{kind="new",outcome="success"} 2`,
		`iac_code_agui_run_duration_seconds_bucket{kind="new",outcome="error",le="0.025"} 0`,
		`iac_code_agui_run_duration_seconds_bucket{kind="new",outcome="error",le="0.1"} 1`,
		`iac_code_agui_interrupts_total{kind="permission"} 2`,
		`iac_code_agui_admission_rejections_total{code="THREAD_BUSY"} 1`,
		`iac_code_agui_state_writes_total{result="ok"} 1`,
		`iac_code_agui_state_writes_total{result="error"} 1`,
		`iac_code_agui_state_write_duration_seconds_count 2`,
		`iac_code_agui_state_write_duration_seconds_bucket{le="0.0025"} 1`,
		`iac_code_agui_state_write_duration_seconds_bucket{le="0.025"} 2`,
		`iac_code_agui_http_requests_total{code="200",route="run"} 1`,
		`iac_code_agui_http_requests_total{code="409",route="run"} 1`,
		`iac_code_agui_http_requests_total{code="200",route="health"} 1`,
	)
}

// TestZeroSeriesAndCollectors checks what a fresh registry exposes: the
// series dashboards divide by, at zero, and the Go and process collectors.
func TestZeroSeriesAndCollectors(t *testing.T) {
	body := scrape(t, metrics.New())
	assertLines(t, body,
		`iac_code_agui_runs_started_total{kind="new"} 0`,
		`iac_code_agui_runs_started_total{kind="resume"} 0`,
		`iac_code_agui_runs_started_total{kind="guidance"} 0`,
		`iac_code_agui_state_writes_total{result="ok"} 0`,
		`iac_code_agui_state_writes_total{result="error"} 0`,
		`iac_code_agui_active_runs 0`,
		`iac_code_agui_events_total 0`,
		`# TYPE iac_code_agui_state_write_duration_seconds histogram`,
		`# TYPE go_goroutines gauge`,
	)
	if !strings.Contains(body, "\nprocess_start_time_seconds ") {
		t.Error("the process collector is missing")
	}
}

// TestLabelsStayBounded feeds values from outside each label's set: they
// must collapse into "other" instead of creating a series per value.
func TestLabelsStayBounded(t *testing.T) {
	m := metrics.New()
	m.RunStarted("thread-123")
	m.RunEnded("thread-123", "weird", "The A2A execution failed.", 0, time.Millisecond)
	m.Interrupt("kind-from-upstream-42")
	m.Interrupt("")
	m.AdmissionRejected("thread_busy with text")
	m.ObserveHTTP("/some/path/xyz", 999)
	m.ObserveHTTP(metrics.RouteCancel, 404)
	body := scrape(t, m)
	assertLines(t, body,
		`iac_code_agui_runs_started_total{kind="other"} 1`,
		`iac_code_agui_runs_total{code="other",kind="other",outcome="other"} 1`,
		`iac_code_agui_interrupts_total{kind="other"} 2`,
		`iac_code_agui_admission_rejections_total{code="other"} 1`,
		`iac_code_agui_http_requests_total{code="other",route="other"} 1`,
		`iac_code_agui_http_requests_total{code="404",route="cancel"} 1`,
		`iac_code_agui_active_runs 0`,
	)
	// Only our series: runtime values such as go_* bytes may contain "999".
	var ours strings.Builder
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "iac_code_agui_") {
			ours.WriteString(l + "\n")
		}
	}
	for _, leak := range []string{"thread-123", "execution failed", "upstream-42", "xyz", `"999"`} {
		if strings.Contains(ours.String(), leak) {
			t.Errorf("label value %q leaked into the exposition", leak)
		}
	}
}

// TestRegistriesAreIndependent: two servers in one process (tests, or an
// embedding program) must not share counts.
func TestRegistriesAreIndependent(t *testing.T) {
	a, b := metrics.New(), metrics.New()
	a.Interrupt("permission")
	if strings.Contains(scrape(t, b), "iac_code_agui_interrupts_total{") {
		t.Fatal("a second Metrics sees the first one's series")
	}
	if a.Registry() == b.Registry() {
		t.Fatal("shared registry")
	}
}

// BenchmarkRunObserved is the per-run cost the adapter pays with metrics
// on: one start and one end.
func BenchmarkRunObserved(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.RunStarted(adapter.RunKindNew)
		m.RunEnded(adapter.RunKindNew, adapter.RunOutcomeSuccess, "", 40, 3*time.Second)
	}
}

// BenchmarkObserveHTTP is the per-request cost of the request counter.
func BenchmarkObserveHTTP(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveHTTP(metrics.RouteRun, 200)
	}
}

// TestEveryInputKindIsALabel ties the interrupt label set to
// projection.Kinds: a kind added there gets its own series here, with no
// second list to update.
func TestEveryInputKindIsALabel(t *testing.T) {
	m := metrics.New()
	var want []string
	for _, k := range projection.Kinds() {
		m.Interrupt(string(k))
		want = append(want, `iac_code_agui_interrupts_total{kind="`+string(k)+`"} 1`)
	}
	assertLines(t, scrape(t, m), want...)
	if len(want) != 5 {
		t.Fatalf("%d kinds, want the 5 of protocol.md §5.2", len(want))
	}
}
