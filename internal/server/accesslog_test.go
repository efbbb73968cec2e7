package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

// logBuffer collects JSON log lines from concurrent goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records decodes every line; a line that is not JSON fails the test.
func (l *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	raw := l.b.String()
	l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(raw), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, rec)
	}
	return out
}

// loggedEnv is an adapter with a JSON debug logger in front of the embedded
// agent; the agent sits behind a real reverse proxy that records the
// X-Request-Id of every upstream request.
type loggedEnv struct {
	URL, Root, StateDir string
	logs                *logBuffer
	mu                  sync.Mutex
	upstreamIDs         []string
}

func newLoggedEnv(t *testing.T) *loggedEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	agent, err := demoagent.Start(ctx, "127.0.0.1:0", demoagent.Options{Token: "upstream-token"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Close() })
	target, _ := url.Parse(agent.URL)
	e := &loggedEnv{StateDir: t.TempDir(), logs: &logBuffer{}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.upstreamIDs = append(e.upstreamIDs, r.Header.Get("X-Request-Id"))
		e.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	if e.Root, err = filepath.EvalSymlinks(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ad := adapter.New(adapter.Options{
		Store:        filestore.New(e.StateDir),
		Upstream:     adapter.A2A(a2a.New(up.URL+"/", "upstream-token")),
		AllowedRoots: request.AllowedRoots([]string{e.Root}),
		Logger:       logger,
	})
	srv := httptest.NewServer(server.New(server.Options{Adapter: ad, Version: "test", Logger: logger}))
	t.Cleanup(srv.Close)
	e.URL = srv.URL + "/"
	return e
}

func (e *loggedEnv) body(threadID, runID, text string) map[string]any {
	return map[string]any{
		"threadId": threadID, "runId": runID, "state": map[string]any{}, "tools": []any{}, "context": []any{},
		"messages": []any{map[string]any{"id": "m-" + runID, "role": "user", "content": text}},
		"forwardedProps": map[string]any{"iacCode": map[string]any{"schemaVersion": 1, "rosInvocationId": "inv-1",
			"cwd": filepath.Join(e.Root, "ws")}},
	}
}

// accessLine waits for the access-log line of requestID.
func (e *loggedEnv) accessLine(t *testing.T, requestID string) map[string]any {
	t.Helper()
	var line map[string]any
	waitUntil(t, func() bool {
		for _, rec := range e.logs.records(t) {
			if rec["msg"] == "http request" && rec["requestId"] == requestID {
				line = rec
				return true
			}
		}
		return false
	})
	return line
}

func TestAccessLogAndRequestID(t *testing.T) {
	e := newLoggedEnv(t)
	res := post(t, e.URL, e.body("thread-log", "run-1", "Create a VPC"), map[string]string{"X-Request-Id": "client-req-1"})
	if res.Status != 200 || res.Header.Get("X-Request-Id") != "client-req-1" {
		t.Fatalf("status %d, X-Request-Id %q", res.Status, res.Header.Get("X-Request-Id"))
	}
	acc := e.accessLine(t, "client-req-1")
	if acc["method"] != "POST" || acc["route"] != "run" || acc["status"] != 200.0 || acc["bytes"] != float64(len(res.Body)) ||
		acc["level"] != "INFO" {
		t.Fatalf("access line = %v (body %d bytes)", acc, len(res.Body))
	}
	if d, _ := acc["durationMs"].(float64); d <= 0 {
		t.Fatalf("durationMs = %v", acc["durationMs"])
	}
	// Every line of the run carries the request, thread, run and execution
	// ids; --debug adds a line per A2A frame and per AG-UI batch.
	seen := map[string]int{}
	execID := ""
	for _, rec := range e.logs.records(t) {
		msg, _ := rec["msg"].(string)
		if rec["requestId"] != "client-req-1" || msg == "http request" {
			continue
		}
		seen[msg]++
		if rec["threadId"] != "thread-log" || rec["runId"] != "run-1" || rec["executionId"] == "" || rec["executionId"] == nil {
			t.Errorf("run line without its ids: %v", rec)
		}
		if execID == "" {
			execID, _ = rec["executionId"].(string)
		} else if rec["executionId"] != execID {
			t.Errorf("execution id changed within the run: %v", rec)
		}
		if msg == "run ended" && (rec["outcome"] != "success" || rec["events"] == 0.0) {
			t.Errorf("run ended line = %v", rec)
		}
	}
	if seen["run started"] != 1 || seen["run ended"] != 1 || seen["a2a frame"] < 2 || seen["agui events"] < 1 {
		t.Fatalf("run lines = %v", seen)
	}
	e.mu.Lock()
	ids := append([]string(nil), e.upstreamIDs...)
	e.mu.Unlock()
	if len(ids) == 0 {
		t.Fatal("no upstream request")
	}
	for _, id := range ids {
		if id != "client-req-1" {
			t.Fatalf("upstream X-Request-Id = %q", ids)
		}
	}

	// An id that is not sane is replaced by a fresh one, echoed and logged.
	bad := post(t, e.URL, "{not json", map[string]string{"X-Request-Id": "has space"})
	gen := bad.Header.Get("X-Request-Id")
	if bad.Status != 400 || len(gen) != 36 || gen == "has space" {
		t.Fatalf("status %d, generated id %q", bad.Status, gen)
	}
	if acc := e.accessLine(t, gen); acc["route"] != "run" || acc["status"] != 400.0 {
		t.Fatalf("access line of a bad request = %v", acc)
	}
	// Unknown routes are labelled "other", without their path.
	r2, err := http.Get(e.URL + "secret-path-text")
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if acc := e.accessLine(t, r2.Header.Get("X-Request-Id")); acc["route"] != "other" || acc["status"] != 404.0 || acc["method"] != "GET" {
		t.Fatalf("access line of a 404 = %v", acc)
	}
	for _, rec := range e.logs.records(t) {
		line, _ := json.Marshal(rec)
		for _, s := range []string{"Create a VPC", "{not json", "secret-path-text", "upstream-token"} {
			if bytes.Contains(line, []byte(s)) {
				t.Errorf("log line holds %q: %s", s, line)
			}
		}
	}
}
