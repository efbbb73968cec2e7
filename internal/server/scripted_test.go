package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/fence"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

// script is a scripted A2A upstream: for each call it answers with the
// function registered for the method and the call's ordinal. It is a fake
// on purpose, for faults iac-code produces only in failure cases that a
// test cannot trigger on demand (an answer accepted by nobody, an input of
// another task).
type script struct {
	mu      sync.Mutex
	methods []string
	bodies  []string // the raw request bodies, in call order
	answer  func(method string, n int, ctxID string) (stream bool, results []string)
	// handoff answers /iac-code/handoff/<op> (recorded as "handoff:<op>")
	// with a status and a body; nil answers 404, as an agent without the
	// session-handoff service.
	handoff func(op string, n int, body map[string]any) (status int, answer string)
	// auth is the Authorization header of every call, in order.
	auth []string
	// hold, when set, returns for a streaming call a channel that keeps
	// its stream open after its frames until closed (nil: none).
	hold func(method string, n int) <-chan struct{}
}

func (s *script) serve(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if op, ok := strings.CutPrefix(r.URL.Path, "/iac-code/handoff/"); ok {
			s.serveHandoff(w, r, op, raw)
			return
		}
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		var req struct{ Method string }
		_ = json.Unmarshal(raw, &req)
		s.mu.Lock()
		s.bodies = append(s.bodies, string(raw))
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		n := 0
		for _, m := range s.methods {
			if m == req.Method {
				n++
			}
		}
		s.methods = append(s.methods, req.Method)
		s.mu.Unlock()
		stream, results := s.answer(req.Method, n, state.ContextIDFor("thread-s"))
		if !stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":%s}`, results[0])
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, res := range results {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}\n\n", res)
		}
		if s.hold != nil {
			// The stream stays open after its frames until the test
			// lets it end (or the client leaves).
			w.(http.Flusher).Flush()
			if ch := s.hold(req.Method, n); ch != nil {
				select {
				case <-ch:
				case <-r.Context().Done():
				}
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

func (s *script) serveHandoff(w http.ResponseWriter, r *http.Request, op string, raw []byte) {
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	s.mu.Lock()
	n := 0
	for _, m := range s.methods {
		if m == "handoff:"+op {
			n++
		}
	}
	s.methods = append(s.methods, "handoff:"+op)
	s.bodies = append(s.bodies, string(raw))
	s.auth = append(s.auth, r.Method+" "+r.Header.Get("Authorization"))
	s.mu.Unlock()
	if s.handoff == nil {
		http.NotFound(w, r)
		return
	}
	status, answer := s.handoff(op, n, body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, answer)
}

func (s *script) calls() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.methods)
}

func scriptedEnv(t *testing.T, s *script) (string, *env) {
	t.Helper()
	return scriptedEnvWith(t, s, scriptedOptions{})
}

// scriptedOptions are the scripted environment's settings beyond the
// defaults.
type scriptedOptions struct {
	authToken, upstreamToken string
	fence                    *fence.Fence
}

func scriptedEnvWith(t *testing.T, s *script, o scriptedOptions) (string, *env) {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	stateDir := t.TempDir()
	client := a2a.New(s.serve(t), o.upstreamToken)
	ad := adapter.New(adapter.Options{Store: filestore.New(stateDir), Upstream: adapter.A2A(client), AllowedRoots: request.AllowedRoots([]string{root}), Fence: o.fence})
	srv := httptest.NewServer(server.New(server.Options{Adapter: ad, Handoff: client, AuthToken: o.authToken}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", &env{Root: root, StateDir: stateDir}
}

func permissionInput(taskID, ctxID string) string {
	return fmt.Sprintf(`{"schemaVersion":1,"kind":"permission","requestTaskId":%q,"contextId":%q,"inputId":"permission-1","toolUseId":"toolu_1","toolName":"bash","prompt":"Run pwd?","required":true}`, taskID, ctxID)
}

func waitingTask(ctxID, input string) string {
	return fmt.Sprintf(`{"id":"task-1","contextId":%q,"status":{"state":"TASK_STATE_INPUT_REQUIRED"},"metadata":{"iac_code":{"input":%s}}}`, ctxID, input)
}

// TestAnswerNotAccepted: a permission answer whose stream brings no event
// is not accepted; the interrupt stays pending and a later resume applies
// it (protocol.md §5.8, §5.9).
func TestAnswerNotAccepted(t *testing.T) {
	s := &script{answer: func(method string, n int, ctxID string) (bool, []string) {
		input := permissionInput("task-1", ctxID)
		switch {
		case method == "SendStreamingMessage" && n == 0:
			return true, []string{`{"task":` + waitingTask(ctxID, input) + `}`}
		case method == "SendStreamingMessage" && n == 1:
			return true, nil // the answer's stream ends without any event
		case method == "SendStreamingMessage":
			return true, []string{fmt.Sprintf(`{"statusUpdate":{"taskId":"task-1","contextId":%q,"status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}`, ctxID)}
		case method == "GetTask":
			return false, []string{waitingTask(ctxID, input)}
		}
		return false, []string{`{}`}
	}}
	url, e := scriptedEnv(t, s)
	it := interrupts(t, post(t, url, e.body("thread-s", "run-1", "hi", nil), nil))[0]
	r := post(t, url, resumeBody(e, "thread-s", "run-2", allow(it["id"])), nil)
	if fin := last(r.Events); fin["code"] != "A2A_UNAVAILABLE" || fin["message"] != "The A2A permission response was not accepted." {
		t.Fatalf("got %v", fin)
	}
	r = post(t, url, resumeBody(e, "thread-s", "run-3", allow(it["id"])), nil)
	if fin := last(r.Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("retry: %v (%v)", fin, types(r.Events))
	}
	if got := s.calls(); got != "[SendStreamingMessage GetTask SendStreamingMessage GetTask SendStreamingMessage]" {
		t.Fatalf("A2A calls %s", got)
	}
}

// TestForeignInput: an input that names another task is a protocol error
// (protocol.md §5.1).
func TestForeignInput(t *testing.T) {
	s := &script{answer: func(method string, n int, ctxID string) (bool, []string) {
		return true, []string{`{"task":` + waitingTask(ctxID, permissionInput("task-other", ctxID)) + `}`}
	}}
	url, e := scriptedEnv(t, s)
	r := post(t, url, e.body("thread-s", "run-1", "hi", nil), nil)
	if fin := last(r.Events); fin["code"] != "A2A_PROTOCOL_ERROR" || fin["message"] != "An interrupt belongs to another A2A task/context." {
		t.Fatalf("got %v", fin)
	}
}
