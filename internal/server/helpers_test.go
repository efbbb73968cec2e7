package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent/demoagenttest"
	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
	"github.com/iac-code-agui/iac-code-agui/internal/fence"
	"github.com/iac-code-agui/iac-code-agui/internal/metrics"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

// env is one adapter served over real loopback HTTP, in front of the
// embedded A2A agent, with a real file store.
type env struct {
	URL      string
	Root     string
	StateDir string
	Agent    *demoagenttest.Server
	// Metrics is this adapter's registry; every test runs through the
	// request counter, so SSE tests also cover its response wrapper.
	Metrics  *metrics.Metrics
	agentURL string
	opts     envOptions
	// Logs is what the server logged, when envOptions.logs is set.
	Logs *e2etest.Buffer
}

type envOptions struct {
	authToken string
	heartbeat time.Duration
	stateDir  string
	// wrap, when set, wraps the real file store (fault injection).
	wrap func(state.Store) state.Store
	// maxCached bounds the adapter's thread cache (0: the default).
	maxCached int
	// bodyTimeout is the handler's body deadline (0: the default).
	bodyTimeout time.Duration
	// roots, when set, are the configured allowed roots (default: Root).
	roots []string
	// copilotKit turns on --compat copilotkit.
	copilotKit bool
	// streamWriteTimeout is server.Options.StreamWriteTimeout (0: the
	// default).
	streamWriteTimeout time.Duration
	// logs keeps the server's JSON log lines in env.Logs (the logger
	// option wins when both are set).
	logs bool
	// bodyBudget is server.Options.BodyBudget (0: the default).
	bodyBudget int64
	// logger, when set, is the server's logger.
	logger *slog.Logger
	// stepDelay is the agent's pause between scripted frames (0: none).
	stepDelay time.Duration
	// fence is the adapter's writer fence (nil: off).
	fence *fence.Fence
}

// newEnv starts the agent and the adapter. Cleanups run in reverse order:
// the HTTP server closes first and waits for its handlers (every run,
// observation and save they make), then the store, then the agent, which
// waits for its tasks (they write into the workspace), and only then are
// the temporary directories removed, which were made before any of them.
func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if o.stateDir == "" {
		o.stateDir = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	agentSrv, err := demoagenttest.Start(ctx, "127.0.0.1:0", demoagent.Options{Token: "upstream-token", StepDelay: o.stepDelay})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agentSrv.Close() })
	e := &env{Root: root, StateDir: o.stateDir, Agent: agentSrv, agentURL: agentSrv.URL, opts: o}
	if o.logs {
		e.Logs = &e2etest.Buffer{}
	}
	e.serve(t)
	return e
}

// serve starts an adapter and its HTTP server for e.
func (e *env) serve(t *testing.T) {
	t.Helper()
	var store state.Store = filestore.New(e.StateDir)
	if e.opts.wrap != nil {
		store = e.opts.wrap(store)
	}
	e.Metrics = metrics.New()
	logger := e.opts.logger
	if logger == nil && e.Logs != nil {
		logger = slog.New(slog.NewJSONHandler(e.Logs, nil))
	}
	ad := adapter.New(adapter.Options{
		Observer:         e.Metrics,
		Store:            store,
		Upstream:         adapter.A2A(a2a.New(e.agentURL, "upstream-token")),
		AllowedRoots:     request.AllowedRoots(e.allowedRoots()),
		MaxCachedThreads: e.opts.maxCached,
		CopilotKitCompat: e.opts.copilotKit,
		Fence:            e.opts.fence,
		Logger:           logger, // nil: slog.Default, as the server's
	})
	h := server.New(server.Options{Adapter: ad, AuthToken: e.opts.authToken, Version: "test", Heartbeat: e.opts.heartbeat, Metrics: e.Metrics, BodyTimeout: e.opts.bodyTimeout,
		StreamWriteTimeout: e.opts.streamWriteTimeout, BodyBudget: e.opts.bodyBudget, Logger: logger})
	srv := httptest.NewServer(h)
	// httptest's Close waits for every handler to return, and with it
	// every run's settling and save.
	t.Cleanup(srv.Close)
	e.URL = srv.URL + "/"
}

func (e *env) allowedRoots() []string {
	if e.opts.roots != nil {
		return e.opts.roots
	}
	return []string{e.Root}
}

// restart returns a fresh adapter process image on the same state
// directory and A2A agent: nothing is cached, as after a restart.
func (e *env) restart(t *testing.T) *env {
	t.Helper()
	n := *e
	n.serve(t)
	return &n
}

// body builds a RunAgentInput as @ag-ui/client 1.0.0 sends it.
func (e *env) body(threadID, runID, text string, iac map[string]any) map[string]any {
	ic := map[string]any{"schemaVersion": 1, "rosInvocationId": "invocation-1", "cwd": filepath.Join(e.Root, "ws")}
	for k, v := range iac {
		ic[k] = v
	}
	msgs := []any{}
	if text != "" {
		msgs = append(msgs, map[string]any{"id": "m-" + runID, "role": "user", "content": text})
	}
	return map[string]any{
		"threadId": threadID, "runId": runID, "protocolVersion": "1.0",
		"state": map[string]any{}, "messages": msgs, "tools": []any{}, "context": []any{},
		"forwardedProps": map[string]any{"iacCode": ic},
	}
}

type response struct {
	Status int
	Header http.Header
	Body   []byte
	Events []map[string]any
	Raw    string
}

// post sends a JSON body and reads the whole answer; SSE answers are split
// into events.
func post(t *testing.T, url string, body any, headers map[string]string) *response {
	t.Helper()
	var rd *bytes.Reader
	switch b := body.(type) {
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(http.MethodPost, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := &response{Status: res.StatusCode, Header: res.Header}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	r.Body = buf.Bytes()
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		r.Raw = buf.String()
		r.Events = parseSSE(t, r.Raw)
	}
	return r
}

func parseSSE(t *testing.T, raw string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line[len("data: "):]), &ev); err != nil {
			t.Fatalf("bad SSE data %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// errorOf decodes the JSON error envelope.
func errorOf(t *testing.T, r *response) (code, msg string) {
	t.Helper()
	var b struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatalf("status %d, body %q is not the error envelope: %v", r.Status, r.Body, err)
	}
	return b.Error.Code, b.Error.Message
}

func types(evs []map[string]any) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i], _ = e["type"].(string)
	}
	return out
}

func last(evs []map[string]any) map[string]any {
	if len(evs) == 0 {
		return nil
	}
	return evs[len(evs)-1]
}

// stream is an open SSE response read event by event.
type stream struct {
	res    *http.Response
	sc     *bufio.Scanner
	events []map[string]any
}

func openStream(t *testing.T, url string, body any) *stream {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	t.Cleanup(func() { res.Body.Close() })
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	return &stream{res: res, sc: sc}
}

// next returns the next event, or nil at the end of the stream.
func (s *stream) next(t *testing.T) map[string]any {
	t.Helper()
	for s.sc.Scan() {
		line := s.sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line[len("data: "):]), &ev); err != nil {
			t.Fatal(err)
		}
		s.events = append(s.events, ev)
		return ev
	}
	return nil
}

// waitFor reads until an event of the given type.
func (s *stream) waitFor(t *testing.T, typ string) map[string]any {
	t.Helper()
	for ev := s.next(t); ev != nil; ev = s.next(t) {
		if ev["type"] == typ {
			return ev
		}
	}
	t.Fatalf("stream ended without %s; got %v", typ, types(s.events))
	return nil
}

// rest reads to the end and returns the last event.
func (s *stream) rest(t *testing.T) map[string]any {
	t.Helper()
	for s.next(t) != nil {
	}
	return last(s.events)
}

// postCancel calls the cancellation extension.
func postCancel(t *testing.T, e *env, executionID string, body any) *response {
	t.Helper()
	return post(t, e.URL+"extensions/iac-code/v1/executions/"+executionID+"/cancel", body, nil)
}

// assertStateClean fails when any file of the state directory contains one
// of the forbidden strings (secrets, message text).
func assertStateClean(t *testing.T, dir string, forbidden ...string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, f := range forbidden {
			if strings.Contains(string(raw), f) {
				t.Errorf("%s contains %q", path, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no state file written")
	}
}

// waitUntil polls cond for up to 15 s (a loaded machine may be slow).
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("condition not reached within 15 s")
}

var suffix atomic.Int64

func randSuffix() string { return strconv.FormatInt(suffix.Add(1), 10) }
