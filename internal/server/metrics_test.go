package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// scrapeMetrics reads GET /metrics over loopback; headers may carry the token.
func scrapeMetrics(t *testing.T, e *env, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.URL+"metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

func assertSamples(t *testing.T, body string, want map[string]float64) {
	t.Helper()
	for series, v := range want {
		if got := e2etest.Sample(body, series); got != v {
			t.Errorf("%s = %v, want %v", series, got, v)
		}
	}
}

// TestMetricsAfterRuns drives one normal run, one permission interrupt, a
// refused new turn (409), the interrupt's resume and one failed run, then
// checks the scraped series against what the client saw.
func TestMetricsAfterRuns(t *testing.T) {
	e := newEnv(t, envOptions{})
	events := 0
	ok := post(t, e.URL, e.body("thread-m1", "run-1", "Create a VPC template", nil), nil)
	if fin := last(ok.Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("normal run: %v", types(ok.Events))
	}
	events += len(ok.Events)

	perm := post(t, e.URL, e.body("thread-m2", "run-1", "Deploy it (permission)", nil), nil)
	its := interrupts(t, perm)
	events += len(perm.Events)
	if r := post(t, e.URL, e.body("thread-m2", "run-2", "hello", nil), nil); r.Status != 409 {
		t.Fatalf("new turn while waiting: %d %s", r.Status, r.Body)
	} else if code, _ := errorOf(t, r); code != "RESUME_REQUIRED" {
		t.Fatalf("code %s", code)
	}
	res := post(t, e.URL, resumeBody(e, "thread-m2", "run-3", map[string]any{
		"interruptId": its[0]["id"], "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}), nil)
	if fin := last(res.Events); fin["type"] != "RUN_FINISHED" || fin["outcome"].(map[string]any)["type"] != "success" {
		t.Fatalf("resume: %v", types(res.Events))
	}
	events += len(res.Events)

	fail := post(t, e.URL, e.body("thread-m3", "run-1", "Please fail", nil), nil)
	if fin := last(fail.Events); fin["type"] != "RUN_ERROR" || fin["code"] != "A2A_EXECUTION_FAILED" {
		t.Fatalf("failed run: %v", last(fail.Events))
	}
	events += len(fail.Events)
	if events < 20 {
		t.Fatalf("only %d events: the scenario did not run", events)
	}

	status, body := scrapeMetrics(t, e, nil)
	if status != 200 {
		t.Fatalf("scrape: %d %s", status, body)
	}
	assertSamples(t, body, map[string]float64{
		`iac_code_agui_runs_started_total{kind="new"}`:                                        3,
		`iac_code_agui_runs_started_total{kind="resume"}`:                                     1,
		`iac_code_agui_runs_total{code="",kind="new",outcome="success"}`:                      1,
		`iac_code_agui_runs_total{code="",kind="new",outcome="interrupt"}`:                    1,
		`iac_code_agui_runs_total{code="",kind="resume",outcome="success"}`:                   1,
		`iac_code_agui_runs_total{code="A2A_EXECUTION_FAILED",kind="new",outcome="error"}`:    1,
		`iac_code_agui_run_duration_seconds_count{kind="new",outcome="success"}`:              1,
		`iac_code_agui_run_duration_seconds_bucket{kind="new",outcome="interrupt",le="3600"}`: 1,
		`iac_code_agui_admission_rejections_total{code="RESUME_REQUIRED"}`:                    1,
		`iac_code_agui_interrupts_total{kind="permission"}`:                                   1,
		`iac_code_agui_active_runs`:                                                           0,
		`iac_code_agui_events_total`:                                                          float64(events),
		`iac_code_agui_state_writes_total{result="error"}`:                                    0,
		`iac_code_agui_http_requests_total{code="200",route="run"}`:                           4,
		`iac_code_agui_http_requests_total{code="409",route="run"}`:                           1,
	})
	// Every run admits, binds its task and settles: at least 3 writes each.
	writes := e2etest.Sample(body, `iac_code_agui_state_writes_total{result="ok"}`)
	if writes < 12 || writes != e2etest.Sample(body, `iac_code_agui_state_write_duration_seconds_count`) {
		t.Errorf("state writes %v, durations %v", writes, e2etest.Sample(body, `iac_code_agui_state_write_duration_seconds_count`))
	}
	if strings.Contains(body, "thread-m") || strings.Contains(body, "run-1") || strings.Contains(body, "VPC") {
		t.Error("an identifier or message text leaked into the metrics")
	}
	if e2etest.Sample(body, `iac_code_agui_http_requests_total{code="200",route="metrics"}`) != -1 {
		t.Error("a scrape is counted before it was answered")
	}

	// The first scrape was counted once answered; an unknown path is "other".
	if r := post(t, e.URL+"nope", "{}", nil); r.Status != 404 {
		t.Fatalf("unknown path: %d", r.Status)
	}
	_, body = scrapeMetrics(t, e, nil)
	assertSamples(t, body, map[string]float64{
		`iac_code_agui_http_requests_total{code="200",route="metrics"}`: 1,
		`iac_code_agui_http_requests_total{code="404",route="other"}`:   1,
	})
}

// TestMetricsDisconnectedRun: a client that leaves mid-stream ends its run
// as "disconnected", and the active gauge returns to zero.
func TestMetricsDisconnectedRun(t *testing.T) {
	e := newEnv(t, envOptions{})
	s := openStream(t, e.URL, e.body("thread-gone", "run-1", "stall", nil))
	s.waitFor(t, "CUSTOM") // RUN_STARTED and the session event were flushed
	if _, body := scrapeMetrics(t, e, nil); e2etest.Sample(body, `iac_code_agui_active_runs`) != 1 {
		t.Fatalf("active runs during the stream: %v", e2etest.Sample(body, `iac_code_agui_active_runs`))
	}
	s.res.Body.Close()
	// One scrape may see the gauge at 0 before the run's counts (the
	// registry collects concurrently), so wait for both.
	waitUntil(t, func() bool {
		_, body := scrapeMetrics(t, e, nil)
		return e2etest.Sample(body, `iac_code_agui_active_runs`) == 0 &&
			e2etest.Sample(body, `iac_code_agui_runs_total{code="",kind="new",outcome="disconnected"}`) == 1 &&
			e2etest.Sample(body, `iac_code_agui_events_total`) == 2
	})
}

// TestMetricsAuth: with a token, /metrics needs it like POST / does
// (protocol.md §2.3 envelope); /health stays open.
func TestMetricsAuth(t *testing.T) {
	e := newEnv(t, envOptions{authToken: "metrics-token"})
	status, body := scrapeMetrics(t, e, nil)
	if status != 401 || strings.TrimSpace(body) != `{"error":{"code":"UNAUTHORIZED","message":"A valid bearer token is required."}}` {
		t.Fatalf("without token: %d %s", status, body)
	}
	if status, _ := scrapeMetrics(t, e, map[string]string{"Authorization": "Bearer wrong"}); status != 401 {
		t.Fatalf("wrong token: %d", status)
	}
	status, body = scrapeMetrics(t, e, map[string]string{"Authorization": "bearer metrics-token"})
	if status != 200 {
		t.Fatalf("with token: %d %s", status, body)
	}
	assertSamples(t, body, map[string]float64{
		`iac_code_agui_http_requests_total{code="401",route="metrics"}`: 2,
	})
	if res, err := http.Get(e.URL + "health"); err != nil || res.StatusCode != 200 {
		t.Fatalf("health: %v %v", res, err)
	} else {
		res.Body.Close()
	}
}

// TestMetricsStateWriteFailure: a failed admission write counts as a state
// write error and a STATE_UNAVAILABLE rejection, and no run starts. The
// fault is injected (failingStore) because a real disk does not fail on
// demand.
func TestMetricsStateWriteFailure(t *testing.T) {
	e := newEnv(t, envOptions{wrap: func(s state.Store) state.Store { return &failingStore{Store: s, failAt: 1} }})
	if r := post(t, e.URL, e.body("thread-mw", "run-1", "Create a VPC template", nil), nil); r.Status != 503 {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	_, body := scrapeMetrics(t, e, nil)
	assertSamples(t, body, map[string]float64{
		`iac_code_agui_state_writes_total{result="error"}`:                   1,
		`iac_code_agui_state_writes_total{result="ok"}`:                      0,
		`iac_code_agui_state_write_duration_seconds_count`:                   1,
		`iac_code_agui_admission_rejections_total{code="STATE_UNAVAILABLE"}`: 1,
		`iac_code_agui_runs_started_total{kind="new"}`:                       0,
		`iac_code_agui_http_requests_total{code="503",route="run"}`:          1,
	})
}

// TestOpenStreamsGauge: iac_code_agui_open_streams counts the run streams
// open now and falls back once they end; the streams stay keep-alive.
func TestOpenStreamsGauge(t *testing.T) {
	e := newEnv(t, envOptions{})
	open := func() float64 {
		_, body := scrapeMetrics(t, e, nil)
		return e2etest.Sample(body, "iac_code_agui_open_streams")
	}
	if n := open(); n != 0 {
		t.Fatalf("open streams before any run: %v", n)
	}
	first := openStream(t, e.URL, e.body("thread-gauge-1", "run-1", "stall", nil))
	first.waitFor(t, "CUSTOM")
	second := openStream(t, e.URL, e.body("thread-gauge-2", "run-1", "stall", nil))
	second.waitFor(t, "CUSTOM")
	if first.res.Close || second.res.Close {
		t.Fatal("a stream announced Connection: close")
	}
	if n := open(); n != 2 {
		t.Fatalf("open streams with two waiting: %v, want 2", n)
	}
	first.res.Body.Close()
	second.res.Body.Close()
	waitUntil(t, func() bool { return open() == 0 })
}
