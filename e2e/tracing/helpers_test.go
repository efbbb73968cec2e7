package tracing

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// gateway is one running binary.
type gateway struct {
	url, root string
	out       *e2etest.Buffer
	cmd       *exec.Cmd
	exited    chan struct{}
}

// traced is the environment that exports to j over protocol, with short
// batch delays so that spans reach Jaeger soon after a run.
func traced(j *e2etest.Jaeger, protocol string) []string {
	endpoint := j.OTLPHTTP
	if protocol == "grpc" {
		endpoint = j.OTLPGRPC
	}
	return []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=" + protocol,
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint, "OTEL_BSP_SCHEDULE_DELAY=100",
		// Whatever these say, only traces leave (metrics stay on /metrics).
		"OTEL_METRICS_EXPORTER=otlp", "OTEL_LOGS_EXPORTER=otlp"}
}

// startGateway starts the binary on a free port with the embedded demo
// agent and waits for /health; it is stopped with SIGINT when t ends.
func startGateway(t *testing.T, root string, env []string, args ...string) *gateway {
	t.Helper()
	return startGatewayOn(t, e2etest.FreePort(t), root, env, args...)
}

// startGatewayOn is startGateway on port.
func startGatewayOn(t *testing.T, port int, root string, env []string, args ...string) *gateway {
	t.Helper()
	if root == "" {
		root = t.TempDir()
	}
	args = append([]string{"--port", strconv.Itoa(port), "--state-dir", filepath.Join(t.TempDir(), "state")}, args...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "IAC_CODE_AGUI_ALLOWED_CWDS=" + root}, env...)
	g := &gateway{url: fmt.Sprintf("http://127.0.0.1:%d/", port), root: root, out: &e2etest.Buffer{}, cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = g.out, g.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(g.exited) }()
	t.Cleanup(func() {
		g.stop(t)
		if t.Failed() {
			t.Logf("gateway output:\n%s", g.out)
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(g.url + "health"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return g
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway not ready:\n%s", g.out)
		}
	}
}

// stop sends SIGINT and waits for the exit (SIGKILL and an error after 15 s).
func (g *gateway) stop(t *testing.T) {
	select {
	case <-g.exited:
		return
	default:
	}
	_ = g.cmd.Process.Signal(os.Interrupt)
	select {
	case <-g.exited:
	case <-time.After(15 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.exited
		t.Error("gateway did not stop on SIGINT")
	}
}

// newIDs returns a fresh trace id and a client span id, and the
// traceparent header naming them.
func newIDs() (traceID, spanID, traceparent string) {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	traceID, spanID = hex.EncodeToString(b[:16]), hex.EncodeToString(b[16:])
	return traceID, spanID, "00-" + traceID + "-" + spanID + "-01"
}

// input is a run request of thread in the workspace root/ws.
func input(root, thread, run, text string, resume []any) map[string]any {
	m := map[string]any{"threadId": thread, "runId": run, "state": map[string]any{}, "tools": []any{}, "context": []any{},
		"messages": []any{}, "forwardedProps": map[string]any{"iacCode": map[string]any{"schemaVersion": 1, "rosInvocationId": "inv-1", "cwd": filepath.Join(root, "ws")}}}
	if text != "" {
		m["messages"] = []any{map[string]any{"id": "m-" + run, "role": "user", "content": text}}
	}
	if resume != nil {
		m["resume"] = resume
	}
	return m
}

// send posts body as JSON to url with the headers (name, value, ...).
func send(url string, body any, headers ...string) (*http.Response, error) {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return http.DefaultClient.Do(req)
}

// post sends body to url with the headers and returns the status and
// the SSE events (or the JSON answer as one event).
func post(t *testing.T, url string, body any, headers ...string) (int, []map[string]any) {
	t.Helper()
	res, err := send(url, body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return res.StatusCode, []map[string]any{m}
	}
	return res.StatusCode, e2etest.Events(b)
}

// last is the last event's type and, for RUN_FINISHED, its outcome
// ("RUN_FINISHED/success"), or for RUN_ERROR its code.
func last(evs []map[string]any) string {
	if len(evs) == 0 {
		return "(none)"
	}
	e := evs[len(evs)-1]
	if o, ok := e["outcome"].(map[string]any); ok {
		return fmt.Sprint(e["type"], "/", o["type"])
	}
	if c, ok := e["code"]; ok {
		return fmt.Sprint(e["type"], "/", c)
	}
	return fmt.Sprint(e["type"])
}

// openRun starts a streaming run and reads it up to its session event; it
// returns the execution id and the rest of the stream.
func openRun(t *testing.T, url string, body any, headers ...string) (string, *bufio.Scanner, func()) {
	t.Helper()
	res, err := send(url, body, headers...)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("open: %v %v", err, res)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		_ = json.Unmarshal([]byte(line), &ev)
		if ev["type"] == "CUSTOM" && ev["name"] == "iac-code.session.v1" {
			v, _ := ev["value"].(map[string]any)
			id, _ := v["executionId"].(string)
			return id, sc, func() { res.Body.Close() }
		}
	}
	t.Fatal("no session event")
	return "", nil, nil
}

// find returns the spans named op (of service, when not empty).
func find(spans []e2etest.Span, service, op string) []e2etest.Span {
	var out []e2etest.Span
	for _, s := range spans {
		if s.Operation == op && (service == "" || s.Service == service) {
			out = append(out, s)
		}
	}
	return out
}

// one is the single span named op of service; it fails t otherwise.
func one(t *testing.T, spans []e2etest.Span, service, op string) e2etest.Span {
	t.Helper()
	got := find(spans, service, op)
	if len(got) != 1 {
		dump(t, spans)
		t.Fatalf("%d spans %q of %q, want 1", len(got), op, service)
	}
	return got[0]
}

func dump(t *testing.T, spans []e2etest.Span) {
	t.Helper()
	for _, s := range spans {
		t.Logf("span %s %s parent=%s %q %v events=%v", s.Service, s.SpanID, s.Parent, s.Operation, s.Tags, s.Events)
	}
}

// has reports whether spans hold one named op of service whose tag key
// is value (any value when value is nil).
func has(spans []e2etest.Span, service, op, key string, value any) bool {
	for _, s := range find(spans, service, op) {
		v, ok := s.Tags[key]
		if key == "" || ok && (value == nil || fmt.Sprint(v) == fmt.Sprint(value)) {
			return true
		}
	}
	return false
}

// parentOf fails t unless child's parent is parent.
func parentOf(t *testing.T, spans []e2etest.Span, child, parent e2etest.Span) {
	t.Helper()
	if child.Parent != parent.SpanID {
		dump(t, spans)
		t.Fatalf("span %q has parent %s, want %q (%s)", child.Operation, child.Parent, parent.Operation, parent.SpanID)
	}
}

// event reports whether s has an event named name.
func event(s e2etest.Span, name string) bool {
	for _, e := range s.Events {
		if e["event"] == name {
			return true
		}
	}
	return false
}

const (
	gatewayService = "iac-code-agui"
	agentService   = "iac-code-agui-demo-agent"
)

// freeClosedPort is a loopback port nothing listens on.
func freeClosedPort(t *testing.T) string {
	return strconv.Itoa(e2etest.FreePort(t))
}

func ioCopy(w io.Writer, res *http.Response) (int64, error) {
	defer res.Body.Close()
	return io.Copy(w, res.Body)
}
