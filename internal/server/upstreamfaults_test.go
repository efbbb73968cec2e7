package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// faultUpstream is an A2A server that misbehaves on purpose in one chosen
// way on its first streaming call; CancelTask is answered normally. It is
// a fake by necessity: the embedded agent (like iac-code) never produces
// these faults on demand.
type faultUpstream struct {
	mode    string
	srv     *httptest.Server
	cancels atomic.Int64
	release chan struct{} // ends the blocking modes
	next    chan struct{} // lets "stalls mid-frame" send its second burst
}

const faultCtx = "thread-fault"

func frame(result string) string {
	return "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" + result + "}\n\n"
}

func statusFrame(task, st string) string {
	return frame(fmt.Sprintf(`{"statusUpdate":{"taskId":%q,"contextId":%q,"status":{"state":%q},"metadata":{"iac_code":{"iacCodeSessionId":"s-1"}}}}`,
		task, state.ContextIDFor(faultCtx), st))
}

func deltaFrame(text string) string {
	return frame(fmt.Sprintf(`{"statusUpdate":{"taskId":"task-f","contextId":%q,"status":{"state":"TASK_STATE_WORKING","message":{"messageId":"task-f-message","role":"ROLE_AGENT","parts":[{"text":%q}]}},"metadata":{"iac_code":{"iacCodeSessionId":"s-1"}}}}`,
		state.ContextIDFor(faultCtx), text))
}

func newFaultUpstream(t *testing.T, mode string) *faultUpstream {
	f := &faultUpstream{mode: mode, release: make(chan struct{}), next: make(chan struct{}, 1)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() { close(f.release); f.srv.CloseClientConnections(); f.srv.Close() })
	return f
}

func (f *faultUpstream) serve(w http.ResponseWriter, r *http.Request) {
	var req struct{ Method string }
	raw, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(raw, &req)
	if req.Method == "CancelTask" {
		f.cancels.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"id":"task-f","contextId":"`+state.ContextIDFor(faultCtx)+`","status":{"state":"TASK_STATE_CANCELED"}}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flush := func(s string) {
		_, _ = io.WriteString(w, s)
		http.NewResponseController(w).Flush()
	}
	block := func() {
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
	}
	switch f.mode {
	case "dies mid-stream":
		flush(statusFrame("task-f", "TASK_STATE_WORKING"))
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	case "never answers":
		block()
	case "stalls after a frame":
		flush(statusFrame("task-f", "TASK_STATE_WORKING"))
		block()
	case "JSON-RPC error":
		flush("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"Internal error\"}}\n\n")
	case "malformed frame":
		flush(statusFrame("task-f", "TASK_STATE_WORKING"))
		flush("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{not json}\n\n")
	case "truncated frame":
		flush(statusFrame("task-f", "TASK_STATE_WORKING"))
		flush("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"statusUpdate\":")
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	case "oversized frame":
		flush(statusFrame("task-f", "TASK_STATE_WORKING"))
		flush("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\"" + strings.Repeat("a", 200<<10) + "\"}}\n\n")
	case "stalls mid-frame":
		flush(statusFrame("task-f", "TASK_STATE_WORKING") + deltaFrame("d1"))
		<-f.next // the client saw d1
		d3 := deltaFrame("d3")
		flush(deltaFrame("d2") + d3[:len(d3)/2])
		block()
	case "task identity changes":
		flush(statusFrame("task-f", "TASK_STATE_WORKING"))
		flush(statusFrame("task-other", "TASK_STATE_WORKING"))
		block()
	}
}

// TestUpstreamFaults: each misbehaviour of the A2A server ends the run with
// its documented RUN_ERROR within a bounded time (the client's idle timeout
// is 300 ms here, 1 h in the product), and leaves no goroutine behind.
func TestUpstreamFaults(t *testing.T) {
	cases := []struct {
		mode, code, msg string
	}{
		{"refuses connections", "A2A_UNAVAILABLE", "The local A2A execution service is unavailable."},
		{"dies mid-stream", "A2A_UNAVAILABLE", "The local A2A execution service is unavailable."},
		{"never answers", "A2A_UNAVAILABLE", "The local A2A execution service is unavailable."},
		{"stalls after a frame", "A2A_UNAVAILABLE", "The local A2A execution service is unavailable."},
		{"JSON-RPC error", "A2A_UNAVAILABLE", "The local A2A execution service is unavailable."},
		{"malformed frame", "A2A_UNAVAILABLE", "The local A2A execution service is unavailable."},
		{"truncated frame", "A2A_UNAVAILABLE", "The local A2A execution service is unavailable."},
		{"oversized frame", "A2A_UNAVAILABLE", "The local A2A execution service is unavailable."},
		{"task identity changes", "A2A_PROTOCOL_ERROR", "The A2A task identity changed unexpectedly."},
	}
	root, _ := filepath.EvalSymlinks(t.TempDir())
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			var url string
			var up *faultUpstream
			if c.mode == "refuses connections" {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				url = "http://" + ln.Addr().String() + "/"
				ln.Close()
			} else {
				up = newFaultUpstream(t, c.mode)
				url = up.srv.URL + "/"
			}
			hc := &http.Client{Transport: &http.Transport{}}
			client := a2a.New(url, "", a2a.WithHTTPClient(hc), a2a.WithIdleTimeout(300*time.Millisecond), a2a.WithMaxFrameBytes(64<<10))
			ad := adapter.New(adapter.Options{Store: state.NewMemStore(), Upstream: adapter.A2A(client), AllowedRoots: request.AllowedRoots([]string{root})})
			srv := httptest.NewServer(server.New(server.Options{Adapter: ad}))
			defer srv.Close()
			before := runtime.NumGoroutine()

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			res := postFaultRun(t, ctx, srv.URL, root)
			var last map[string]any
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					last = nil
					_ = json.Unmarshal([]byte(d), &last)
				}
			}
			res.Body.Close()
			if ctx.Err() != nil {
				t.Fatalf("no terminal event within 10 s")
			}
			if last["type"] != "RUN_ERROR" || last["code"] != c.code || last["message"] != c.msg {
				t.Fatalf("ended %v after %v, want %s %q", last, time.Since(start), c.code, c.msg)
			}
			// Nothing left behind: the goroutines come back to where
			// they were before the run (idle keep-alive connections of
			// the A2A client are closed first; they are pooled, not
			// leaked).
			hc.CloseIdleConnections()
			http.DefaultClient.CloseIdleConnections()
			deadline := time.Now().Add(5 * time.Second)
			for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				hc.CloseIdleConnections()
			}
			if n := runtime.NumGoroutine(); n > before+2 {
				buf := make([]byte, 1<<20)
				t.Fatalf("%d goroutines after the run, %d before\n%s", n, before, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// TestStalledUpstreamClientLeaves: while the upstream stalls, heartbeats
// keep the client's stream open; when the client leaves, the run cancels
// its A2A task and nothing is left behind.
func TestStalledUpstreamClientLeaves(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	up := newFaultUpstream(t, "stalls after a frame")
	hc := &http.Client{Transport: &http.Transport{}}
	client := a2a.New(up.srv.URL+"/", "", a2a.WithHTTPClient(hc))
	ad := adapter.New(adapter.Options{Store: state.NewMemStore(), Upstream: adapter.A2A(client), AllowedRoots: request.AllowedRoots([]string{root})})
	srv := httptest.NewServer(server.New(server.Options{Adapter: ad, Heartbeat: 100 * time.Millisecond}))
	defer srv.Close()
	before := runtime.NumGoroutine()
	body, _ := json.Marshal(map[string]any{
		"threadId": faultCtx, "runId": "run-1", "state": map[string]any{}, "tools": []any{}, "context": []any{},
		"messages":       []any{map[string]any{"id": "m", "role": "user", "content": "hello"}},
		"forwardedProps": map[string]any{"iacCode": map[string]any{"schemaVersion": 1, "rosInvocationId": "inv", "cwd": filepath.Join(root, "ws")}},
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(res.Body)
	heartbeats := 0
	for heartbeats < 3 && sc.Scan() {
		if sc.Text() == ": heartbeat" {
			heartbeats++
		}
	}
	if heartbeats < 3 {
		t.Fatal("no heartbeats while the upstream stalls")
	}
	cancel()
	res.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for up.cancels.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if up.cancels.Load() != 1 {
		t.Fatalf("%d CancelTask calls after the client left, want 1", up.cancels.Load())
	}
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		hc.CloseIdleConnections()
		http.DefaultClient.CloseIdleConnections()
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Fatalf("%d goroutines after the run, %d before", n, before)
	}
}

// TestUpstreamStallsMidFrame: events mapped while the upstream is in the
// middle of a frame may wait for the rest of it (run.go, midFrameDelay),
// but only for a bounded time: a stall mid-frame does not hold them back.
func TestUpstreamStallsMidFrame(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	up := newFaultUpstream(t, "stalls mid-frame")
	hc := &http.Client{Transport: &http.Transport{}}
	client := a2a.New(up.srv.URL+"/", "", a2a.WithHTTPClient(hc))
	ad := adapter.New(adapter.Options{Store: state.NewMemStore(), Upstream: adapter.A2A(client), AllowedRoots: request.AllowedRoots([]string{root})})
	srv := httptest.NewServer(server.New(server.Options{Adapter: ad, Heartbeat: time.Hour}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := postFaultRun(t, ctx, srv.URL, root)
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for _, want := range []string{`"delta":"d1"`, `"delta":"d2"`} {
		found := false
		for !found && sc.Scan() {
			found = strings.Contains(sc.Text(), want)
		}
		if !found {
			t.Fatalf("%s never arrived (%v)", want, ctx.Err())
		}
		select {
		case up.next <- struct{}{}:
		default:
		}
	}
}

// postFaultRun posts the fault tests' one normal turn (thread faultCtx,
// run-1, workspace <root>/ws) to the adapter at url.
func postFaultRun(t *testing.T, ctx context.Context, url, root string) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"threadId": faultCtx, "runId": "run-1", "state": map[string]any{}, "tools": []any{}, "context": []any{},
		"messages":       []any{map[string]any{"id": "m", "role": "user", "content": "hello"}},
		"forwardedProps": map[string]any{"iacCode": map[string]any{"schemaVersion": 1, "rosInvocationId": "inv", "cwd": filepath.Join(root, "ws")}},
	})
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
