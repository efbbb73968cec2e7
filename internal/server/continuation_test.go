package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// TestContinuationLost: after an accepted answer, a continuation that ends
// while the task still works (subscription and GetTask both say working)
// ends A2A_UNAVAILABLE and cancels the task (adapter.md §5.12). The
// upstream is scripted: a task stuck in WORKING with a silent subscription
// is a fault iac-code produces only by losing its connection mid-turn.
func TestContinuationLost(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	sends := 0
	perm := `{"schemaVersion":1,"kind":"permission","requestTaskId":"task-1","contextId":"%[1]s","inputId":"permission-1","toolUseId":"toolu_1","toolName":"bash","prompt":"Run pwd?","options":[{"id":"allow_once","label":"Allow once"},{"id":"deny","label":"Deny"}],"required":true}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/iac-code/pipeline/state" {
			http.NotFound(w, r)
			return
		}
		var req struct{ Method string }
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &req)
		mu.Lock()
		methods = append(methods, req.Method)
		n := sends
		if req.Method == "SendStreamingMessage" {
			sends++
		}
		mu.Unlock()
		ctxID := state.ContextIDFor("thread-cont")
		stream := func(results ...string) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, res := range results {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}\n\n", res)
			}
		}
		working := fmt.Sprintf(`{"id":"task-1","contextId":%q,"status":{"state":"TASK_STATE_WORKING"}}`, ctxID)
		switch {
		case req.Method == "SendStreamingMessage" && n == 0:
			stream(fmt.Sprintf(`{"task":{"id":"task-1","contextId":%q,"status":{"state":"TASK_STATE_SUBMITTED"}}}`, ctxID),
				fmt.Sprintf(`{"statusUpdate":{"taskId":"task-1","contextId":%[1]q,"status":{"state":"TASK_STATE_INPUT_REQUIRED"},"metadata":{"iac_code":{"input":`+perm+`}}}}`, ctxID))
		case req.Method == "SendStreamingMessage":
			stream(fmt.Sprintf(`{"statusUpdate":{"taskId":"task-1","contextId":%q,"status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"inputReceived":{"kind":"permission","inputId":"permission-1"}}}}}`, ctxID))
		case req.Method == "SubscribeToTask":
			stream(`{"task":` + working + `}`)
		case req.Method == "GetTask" && n == 1:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"id":"task-1","contextId":%[1]q,"status":{"state":"TASK_STATE_INPUT_REQUIRED"},"metadata":{"iac_code":{"input":`+perm+`}}}}`, ctxID)
		default: // GetTask after the continuation, CancelTask
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":%s}`, working)
		}
	}))
	t.Cleanup(up.Close)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ad := adapter.New(adapter.Options{Store: state.NewFileStore(t.TempDir()), Client: a2a.New(up.URL+"/", ""), AllowedRoots: request.AllowedRoots([]string{root})})
	srv := httptest.NewServer(server.New(server.Options{Adapter: ad}))
	t.Cleanup(srv.Close)
	e := &env{Root: root}
	it := interrupts(t, post(t, srv.URL+"/", e.body("thread-cont", "run-1", "hi", nil), nil))[0]
	r := post(t, srv.URL+"/", resumeBody(e, "thread-cont", "run-2", allow(it["id"])), nil)
	if fin := last(r.Events); fin["code"] != "A2A_UNAVAILABLE" {
		t.Fatalf("got %v (%v)", fin, types(r.Events))
	}
	mu.Lock()
	defer mu.Unlock()
	if got := fmt.Sprint(methods); got != "[SendStreamingMessage GetTask SendStreamingMessage SubscribeToTask GetTask CancelTask]" {
		t.Fatalf("A2A calls %s", got)
	}
}
