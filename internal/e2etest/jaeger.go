package e2etest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// JaegerEnv names the Jaeger binary the tracing tests start; .ci/run
// builds it (from e2e/tracing/tools) into DefaultJaeger and sets it.
const JaegerEnv = "IAC_CODE_AGUI_TEST_JAEGER"

// JaegerVersion is the Jaeger release e2e/tracing/tools pins.
const JaegerVersion = "v1.75.0"

// DefaultJaeger is where .ci/run caches the Jaeger build.
func DefaultJaeger() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "iac-code-agui", "jaeger-"+JaegerVersion)
}

//go:embed jaeger.yaml
var jaegerConfig []byte

// Jaeger is a Jaeger v2 process on loopback with its in-memory store.
type Jaeger struct {
	// OTLPHTTP and OTLPGRPC are the receivers' endpoints
	// ("http://127.0.0.1:port"); Query is the query API's base URL.
	OTLPHTTP, OTLPGRPC, Query string
}

// StartJaeger starts Jaeger for t and stops it when t ends. Without the
// binary (JaegerEnv, else DefaultJaeger) the test is skipped, and fails
// under CI=true: CI must never pass by skipping the backend.
func StartJaeger(t testing.TB) *Jaeger {
	t.Helper()
	bin := os.Getenv(JaegerEnv)
	if bin == "" {
		bin = DefaultJaeger()
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Jaeger binary %s: %v (.ci/run builds it)", bin, err)
		}
		t.Skipf("no Jaeger binary at %s (set %s, or build it as .ci/run does)", bin, JaegerEnv)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, jaegerConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	httpPort, grpcPort, queryPort, queryGRPC := FreePort(t), FreePort(t), FreePort(t), FreePort(t)
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir,
		// Jaeger's own tracing stays off.
		"OTEL_SDK_DISABLED=true", "OTEL_TRACES_EXPORTER=none",
		"JAEGER_OTLP_HTTP_PORT=" + strconv.Itoa(httpPort), "JAEGER_OTLP_GRPC_PORT=" + strconv.Itoa(grpcPort),
		"JAEGER_QUERY_PORT=" + strconv.Itoa(queryPort), "JAEGER_QUERY_GRPC_PORT=" + strconv.Itoa(queryGRPC)}
	out := &Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("jaeger output:\n%s", out)
		}
	})
	j := &Jaeger{
		OTLPHTTP: fmt.Sprintf("http://127.0.0.1:%d", httpPort),
		OTLPGRPC: fmt.Sprintf("http://127.0.0.1:%d", grpcPort),
		Query:    fmt.Sprintf("http://127.0.0.1:%d", queryPort),
	}
	// Ready when the query API answers and the receiver accepts.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("jaeger exited:\n%s", out)
		default:
		}
		if j.get("/api/services") == nil && j.post("/v1/traces") == nil {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger not ready:\n%s", out)
		}
	}
}

func (j *Jaeger) get(path string) error {
	res, err := http.Get(j.Query + path)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	return nil
}

func (j *Jaeger) post(path string) error {
	res, err := http.Post(j.OTLPHTTP+path, "application/json", nil)
	if err != nil {
		return err
	}
	res.Body.Close()
	return nil
}

// Span is one span of the query API's answer.
type Span struct {
	TraceID, SpanID, Operation, Service string
	// Parent is the CHILD_OF reference's span id ("" for a root).
	Parent string
	Tags   map[string]any
	// Events are the span's events (Jaeger's logs): each one's fields,
	// its name under "event".
	Events []map[string]any
}

type jaegerTag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

type jaegerAnswer struct {
	Data []struct {
		TraceID string `json:"traceID"`
		Spans   []struct {
			TraceID    string `json:"traceID"`
			SpanID     string `json:"spanID"`
			Operation  string `json:"operationName"`
			ProcessID  string `json:"processID"`
			References []struct {
				RefType string `json:"refType"`
				SpanID  string `json:"spanID"`
			} `json:"references"`
			Tags []jaegerTag `json:"tags"`
			Logs []struct {
				Fields []jaegerTag `json:"fields"`
			} `json:"logs"`
		} `json:"spans"`
		Processes map[string]struct {
			ServiceName string `json:"serviceName"`
		} `json:"processes"`
	} `json:"data"`
}

// Trace returns the spans Jaeger holds for traceID (none when it has no
// such trace yet).
func (j *Jaeger) Trace(t testing.TB, traceID string) []Span {
	t.Helper()
	raw := j.Raw(t, "/api/traces/"+traceID)
	var ans jaegerAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		t.Fatalf("query API: %v: %s", err, raw)
	}
	var spans []Span
	for _, tr := range ans.Data {
		for _, s := range tr.Spans {
			sp := Span{TraceID: s.TraceID, SpanID: s.SpanID, Operation: s.Operation,
				Service: tr.Processes[s.ProcessID].ServiceName, Tags: map[string]any{}}
			for _, r := range s.References {
				if r.RefType == "CHILD_OF" {
					sp.Parent = r.SpanID
				}
			}
			for _, tg := range s.Tags {
				sp.Tags[tg.Key] = tg.Value
			}
			for _, l := range s.Logs {
				ev := map[string]any{}
				for _, f := range l.Fields {
					ev[f.Key] = f.Value
				}
				sp.Events = append(sp.Events, ev)
			}
			spans = append(spans, sp)
		}
	}
	return spans
}

// WaitTrace polls the query API until done accepts the spans of traceID
// (the batch processors export within their delay), failing t after 30 s.
func (j *Jaeger) WaitTrace(t testing.TB, traceID string, done func([]Span) bool) []Span {
	t.Helper()
	var spans []Span
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		spans = j.Trace(t, traceID)
		if done(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			for _, s := range spans {
				t.Logf("span %s %s parent=%s %s %v", s.Service, s.SpanID, s.Parent, s.Operation, s.Tags)
			}
			t.Fatalf("trace %s: %d spans, not what was expected", traceID, len(spans))
		}
	}
}

// Raw is the query API's answer to path, as it came.
func (j *Jaeger) Raw(t testing.TB, path string) []byte {
	t.Helper()
	res, err := http.Get(j.Query + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode == http.StatusNotFound {
		return []byte(`{"data":[]}`)
	}
	if res.StatusCode != 200 {
		t.Fatalf("query API %s: status %d: %s", path, res.StatusCode, b)
	}
	return b
}
