package tracing

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// TestRunTrace: a run sent with the client's traceparent appears in
// Jaeger under that trace id, over both OTLP protocols: the server span a
// child of the client's span; admission, state load and saves, the run
// and its A2A call under it; the demo agent's spans (its own service)
// children of the A2A call, so the traceparent the agent received is the
// call's. Every log line of the request carries the trace and span ids,
// in text and in JSON.
func TestRunTrace(t *testing.T) {
	j := e2etest.StartJaeger(t)
	for _, tc := range []struct{ protocol, format string }{{"http/protobuf", "text"}, {"grpc", "json"}} {
		t.Run(strings.ReplaceAll(tc.protocol, "/", "-"), func(t *testing.T) {
			g := startGateway(t, "", traced(j, tc.protocol), "--demo", "--log-format", tc.format)
			traceID, clientSpan, tp := newIDs()
			thread := "th-run-" + tc.format
			status, evs := post(t, g.url, input(g.root, thread, "run-1", "Create a VPC template", nil),
				"traceparent", tp, "tracestate", "vendor=opaque")
			if status != 200 || last(evs) != "RUN_FINISHED/success" {
				t.Fatalf("run: %d %s", status, last(evs))
			}
			spans := j.WaitTrace(t, traceID, func(s []e2etest.Span) bool {
				return has(s, gatewayService, "agui.run", "iac_code_agui.run.outcome", nil) &&
					len(find(s, agentService, "demo-agent SendStreamingMessage")) == 1 &&
					len(find(s, gatewayService, "state.save")) >= 2
			})
			server := one(t, spans, gatewayService, "POST /")
			if server.Parent != clientSpan {
				t.Fatalf("server span's parent %s, want the client's %s", server.Parent, clientSpan)
			}
			admission := one(t, spans, gatewayService, "agui.admission")
			parentOf(t, spans, admission, server)
			if admission.Tags["iac_code_agui.thread.id"] != thread || admission.Tags["iac_code_agui.run.id"] != "run-1" {
				t.Errorf("admission tags %v", admission.Tags)
			}
			load := one(t, spans, gatewayService, "state.load")
			parentOf(t, spans, load, admission)
			if load.Tags["iac_code_agui.state.store"] != "file" || load.Tags["iac_code_agui.state.found"] != false {
				t.Errorf("state.load tags %v", load.Tags)
			}
			run := one(t, spans, gatewayService, "agui.run")
			parentOf(t, spans, run, server)
			// The admission's save, and the run's own.
			under := map[string]int{}
			for _, s := range find(spans, gatewayService, "state.save") {
				if b, _ := s.Tags["iac_code_agui.state.bytes"].(float64); b <= 0 || s.Tags["iac_code_agui.state.store"] != "file" {
					t.Errorf("state.save tags %v", s.Tags)
				}
				under[s.Parent]++
			}
			if under[admission.SpanID] != 1 || under[run.SpanID] < 1 {
				dump(t, spans)
				t.Fatalf("state.save spans by parent: %v", under)
			}
			if run.Tags["iac_code_agui.run.kind"] != "new" || run.Tags["iac_code_agui.run.outcome"] != "success" {
				t.Errorf("run tags %v", run.Tags)
			}
			// RUN_STARTED … RUN_FINISHED: every event the client got.
			if n, _ := run.Tags["iac_code_agui.run.events"].(float64); int(n) != len(evs) {
				t.Errorf("run events %v, the client got %d", run.Tags["iac_code_agui.run.events"], len(evs))
			}
			if _, ok := run.Tags["iac_code_agui.run.first_event_ms"]; !ok {
				t.Errorf("run has no time to first event: %v", run.Tags)
			}
			call := one(t, spans, gatewayService, "A2A SendStreamingMessage")
			parentOf(t, spans, call, run)
			if call.Tags["span.kind"] != "client" || call.Tags["rpc.method"] != "SendStreamingMessage" {
				t.Errorf("A2A call tags %v", call.Tags)
			}
			agentServer := one(t, spans, agentService, "demo-agent POST /")
			parentOf(t, spans, agentServer, call)
			parentOf(t, spans, one(t, spans, agentService, "demo-agent SendStreamingMessage"), agentServer)
			checkLogs(t, g.out.String(), tc.format, thread, traceID)
		})
	}
}

// checkLogs: every line naming thread, and the run's access line, carry
// trace_id = traceID and a span id.
func checkLogs(t *testing.T, out, format, thread, traceID string) {
	t.Helper()
	spanID := regexp.MustCompile(`^[0-9a-f]{16}$`)
	n := 0
	for _, line := range strings.Split(out, "\n") {
		var tid, sid string
		var mine bool
		if format == "json" {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) != nil {
				continue
			}
			mine = m["threadId"] == thread || m["route"] == "run"
			tid, _ = m["trace_id"].(string)
			sid, _ = m["span_id"].(string)
		} else {
			mine = strings.Contains(line, "threadId="+thread+" ") || strings.Contains(line, "route=run ")
			if _, rest, ok := strings.Cut(line, " trace_id="); ok {
				tid, _, _ = strings.Cut(rest, " ")
			}
			if _, rest, ok := strings.Cut(line, " span_id="); ok {
				sid, _, _ = strings.Cut(rest, " ")
			}
		}
		if !mine {
			continue
		}
		n++
		if tid != traceID || !spanID.MatchString(sid) {
			t.Errorf("log line without the trace (%q, %q): %s", tid, sid, line)
		}
	}
	if n < 3 {
		t.Errorf("only %d log lines of the run", n)
	}
}

// TestResumeTrace: an interrupt raised in one trace, a new turn refused
// (the refusal code on the admission span), the answer applied in a third
// trace; the runs' spans and their A2A calls.
func TestResumeTrace(t *testing.T) {
	j := e2etest.StartJaeger(t)
	g := startGateway(t, "", traced(j, "http/protobuf"), "--demo")
	trace1, _, tp1 := newIDs()
	_, evs := post(t, g.url, input(g.root, "th-resume", "run-1", "permission please", nil), "traceparent", tp1)
	if last(evs) != "RUN_FINISHED/interrupt" {
		t.Fatalf("first run: %s", last(evs))
	}
	its := evs[len(evs)-1]["outcome"].(map[string]any)["interrupts"].([]any)
	id := its[0].(map[string]any)["id"].(string)
	spans := j.WaitTrace(t, trace1, func(s []e2etest.Span) bool {
		return has(s, gatewayService, "agui.run", "iac_code_agui.run.outcome", "interrupt")
	})
	run := one(t, spans, gatewayService, "agui.run")
	if !event(run, "interrupt raised") {
		dump(t, spans)
		t.Fatal("the first run has no interrupt event")
	}

	// A new turn while the interrupt waits: refused, and the admission's
	// span says why.
	trace3, _, tp3 := newIDs()
	if status, _ := post(t, g.url, input(g.root, "th-resume", "run-x", "Create a VPC", nil), "traceparent", tp3); status != 409 {
		t.Fatalf("a new turn while an interrupt waits: %d", status)
	}
	spans = j.WaitTrace(t, trace3, func(s []e2etest.Span) bool {
		return has(s, gatewayService, "agui.admission", "iac_code_agui.admission.refusal", "RESUME_REQUIRED")
	})
	if len(find(spans, gatewayService, "agui.run")) != 0 {
		t.Fatal("a refused request has a run span")
	}

	trace2, _, tp2 := newIDs()
	resume := []any{map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}}
	_, evs = post(t, g.url, input(g.root, "th-resume", "run-2", "", resume), "traceparent", tp2)
	if last(evs) != "RUN_FINISHED/success" {
		t.Fatalf("resume: %s", last(evs))
	}
	spans = j.WaitTrace(t, trace2, func(s []e2etest.Span) bool {
		return has(s, gatewayService, "agui.run", "iac_code_agui.run.outcome", "success") && hasAgent(s)
	})
	run = one(t, spans, gatewayService, "agui.run")
	if run.Tags["iac_code_agui.run.kind"] != "resume" || !event(run, "answer applied") {
		dump(t, spans)
		t.Fatalf("resume run: %v", run.Tags)
	}
	calls := 0
	for _, s := range spans {
		if strings.HasPrefix(s.Operation, "A2A ") && s.Parent == run.SpanID {
			calls++
		}
	}
	if calls == 0 {
		dump(t, spans)
		t.Fatal("the resume made no A2A call under its run span")
	}
}

// hasAgent reports whether the demo agent's spans are in the trace.
func hasAgent(spans []e2etest.Span) bool {
	for _, s := range spans {
		if s.Service == agentService {
			return true
		}
	}
	return false
}

// TestCancelTrace: the cancel route's own trace holds its server span and
// the A2A CancelTask it sent (and the agent's side of it); the cancelled
// run's trace ends with the run's error code.
func TestCancelTrace(t *testing.T) {
	j := e2etest.StartJaeger(t)
	g := startGateway(t, "", traced(j, "http/protobuf"), "--demo")
	trace1, _, tp1 := newIDs()
	exec, sc, closeRun := openRun(t, g.url, input(g.root, "th-cancel", "run-1", "stall please", nil), "traceparent", tp1)
	defer closeRun()
	trace2, clientSpan, tp2 := newIDs()
	status, _ := post(t, g.url+"extensions/iac-code/v1/executions/"+exec+"/cancel",
		map[string]any{"threadId": "th-cancel", "rosInvocationId": "inv-1"}, "traceparent", tp2)
	if status != 200 {
		t.Fatalf("cancel: %d", status)
	}
	lastLine := ""
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			lastLine = l
		}
	}
	if !strings.Contains(lastLine, `"RUN_ERROR"`) {
		t.Fatalf("the cancelled run ended with %s", lastLine)
	}
	spans := j.WaitTrace(t, trace2, func(s []e2etest.Span) bool {
		return len(find(s, gatewayService, "A2A CancelTask")) == 1 && len(find(s, agentService, "demo-agent CancelTask")) == 1
	})
	server := one(t, spans, gatewayService, "POST /extensions/iac-code/v1/executions/{executionId}/cancel")
	if server.Parent != clientSpan {
		t.Fatalf("cancel span's parent %s, want %s", server.Parent, clientSpan)
	}
	call := one(t, spans, gatewayService, "A2A CancelTask")
	if !descends(spans, call, server) {
		dump(t, spans)
		t.Fatal("CancelTask is not under the cancel request's span")
	}
	parentOf(t, spans, one(t, spans, agentService, "demo-agent POST /"), call)
	spans = j.WaitTrace(t, trace1, func(s []e2etest.Span) bool {
		return has(s, gatewayService, "agui.run", "iac_code_agui.run.outcome", "error")
	})
	run := one(t, spans, gatewayService, "agui.run")
	if run.Tags["iac_code_agui.error.code"] != "CANCELLED" {
		t.Errorf("cancelled run tags %v", run.Tags)
	}
}

// descends reports whether s is below ancestor in spans.
func descends(spans []e2etest.Span, s, ancestor e2etest.Span) bool {
	byID := map[string]e2etest.Span{}
	for _, x := range spans {
		byID[x.SpanID] = x
	}
	for i := 0; i < len(spans) && s.Parent != ""; i++ {
		if s.Parent == ancestor.SpanID {
			return true
		}
		s = byID[s.Parent]
	}
	return false
}

// TestCollectorTrouble: with the collector unreachable, or accepting
// connections and never answering, the client gets the same events as
// from a gateway without tracing; the lost spans are counted on
// /metrics, and the gateway still stops at once.
func TestCollectorTrouble(t *testing.T) {
	// A listener that accepts and never answers: a stalled collector.
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hole.Close()
	done := make(chan struct{})
	defer func() { hole.Close(); <-done }()
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	closed := "http://127.0.0.1:" + freeClosedPort(t)
	want := types(t, startGateway(t, "", nil, "--demo"), "")
	for name, endpoint := range map[string]string{"unreachable": closed, "stalled": "http://" + hole.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			g := startGateway(t, "", []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
				"OTEL_EXPORTER_OTLP_TIMEOUT=300", "OTEL_BSP_SCHEDULE_DELAY=50"}, "--demo")
			_, _, tp := newIDs()
			if got := types(t, g, tp); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("events with a %s collector:\n%v\nwithout tracing:\n%v", name, got, want)
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				res, err := http.Get(g.url + "metrics")
				if err != nil {
					t.Fatal(err)
				}
				b := new(strings.Builder)
				_, _ = ioCopy(b, res)
				if e2etest.Sample(b.String(), "iac_code_agui_trace_spans_dropped_total") > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no dropped spans counted:\n%s", b)
				}
			}
		})
	}
}

// types runs one turn and returns its event types, a custom event by name.
func types(t *testing.T, g *gateway, traceparent string) []string {
	t.Helper()
	h := []string{}
	if traceparent != "" {
		h = []string{"traceparent", traceparent}
	}
	status, evs := post(t, g.url, input(g.root, "th-trouble", "run-1", "Create a VPC template", nil), h...)
	if status != 200 || last(evs) != "RUN_FINISHED/success" {
		t.Fatalf("run: %d %s", status, last(evs))
	}
	var out []string
	for _, e := range evs {
		s, _ := e["type"].(string)
		if n, ok := e["name"].(string); ok {
			s += ":" + n
		}
		out = append(out, s)
	}
	return out
}

// TestTraceScreenshot draws the trace of a turn into SCREENSHOTS/trace.png (e2e/browser/trace.mjs, headless
// chromium); scripts/screenshots.sh sets SCREENSHOTS. Skipped otherwise.
func TestTraceScreenshot(t *testing.T) {
	dir := os.Getenv("SCREENSHOTS")
	if dir == "" {
		t.Skip("SCREENSHOTS is not set")
	}
	j := e2etest.StartJaeger(t)
	g := startGateway(t, "", traced(j, "http/protobuf"), "--demo")
	traceID, _, tp := newIDs()
	_, evs := post(t, g.url, input(g.root, "th-picture", "run-1", "Create a VPC template", nil), "traceparent", tp)
	if last(evs) != "RUN_FINISHED/success" {
		t.Fatalf("run: %s", last(evs))
	}
	j.WaitTrace(t, traceID, func(s []e2etest.Span) bool {
		return has(s, gatewayService, "agui.run", "iac_code_agui.run.outcome", "success") && hasAgent(s) &&
			len(find(s, gatewayService, "state.save")) >= 3
	})
	raw := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(raw, j.Raw(t, "/api/traces/"+traceID), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "trace.mjs")
	cmd.Dir = "../browser"
	cmd.Env = append(os.Environ(), "TRACE_JSON="+raw, "OUT="+filepath.Join(dir, "trace.png"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("trace.mjs: %v\n%s", err, out)
	}
}

// TestSpansFlushedOnStop: with a batch delay far longer than the test, a
// run's spans reach Jaeger only because stopping the gateway (SIGINT, as
// SIGTERM) flushes them.
func TestSpansFlushedOnStop(t *testing.T) {
	j := e2etest.StartJaeger(t)
	env := append(traced(j, "http/protobuf"), "OTEL_BSP_SCHEDULE_DELAY=600000")
	g := startGateway(t, "", env, "--demo")
	traceID, _, tp := newIDs()
	if _, evs := post(t, g.url, input(g.root, "th-flush", "run-1", "Create a VPC template", nil), "traceparent", tp); last(evs) != "RUN_FINISHED/success" {
		t.Fatalf("run: %s", last(evs))
	}
	if n := len(j.Trace(t, traceID)); n != 0 {
		t.Fatalf("%d spans exported before the stop; the batch delay did not hold them", n)
	}
	g.stop(t)
	j.WaitTrace(t, traceID, func(s []e2etest.Span) bool {
		return has(s, gatewayService, "agui.run", "iac_code_agui.run.outcome", "success") && hasAgent(s)
	})
}
