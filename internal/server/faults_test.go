package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent/demoagenttest"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

// TestIdentityChangeIsProtocolError: a task id that changes mid-stream ends
// the run with A2A_PROTOCOL_ERROR (protocol.md §4.6). Scripted: iac-code
// never changes a task's identity mid-stream.
func TestIdentityChangeIsProtocolError(t *testing.T) {
	s := &script{answer: func(method string, n int, ctxID string) (bool, []string) {
		if method != "SendStreamingMessage" {
			return false, []string{`{}`}
		}
		return true, []string{
			fmt.Sprintf(`{"task":{"id":"task-1","contextId":%q,"status":{"state":"TASK_STATE_SUBMITTED"}}}`, ctxID),
			fmt.Sprintf(`{"statusUpdate":{"taskId":"task-1","contextId":%q,"status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"iacCodeSessionId":"s-1"}}}}`, ctxID),
			fmt.Sprintf(`{"statusUpdate":{"taskId":"task-2","contextId":%q,"status":{"state":"TASK_STATE_WORKING"}}}`, ctxID),
		}
	}}
	url, e := scriptedEnv(t, s)
	r := post(t, url, e.body("thread-s", "run-1", "hi", nil), nil)
	fin := last(r.Events)
	if fin["code"] != "A2A_PROTOCOL_ERROR" || fin["message"] != "The A2A task identity changed unexpectedly." {
		t.Fatalf("got %v (%v)", fin, types(r.Events))
	}
}

// TestReadOnlyStateDirFailsClosed makes the thread directory immutable
// (chattr +i: the tests run as root, which file modes do not stop) while a
// permission run is on its way: the interrupt cannot be committed, so the
// run ends STATE_PERSISTENCE_FAILED without announcing it, and the A2A task
// is cancelled (protocol.md §9.3).
func TestReadOnlyStateDirFailsClosed(t *testing.T) {
	if _, err := exec.LookPath("chattr"); err != nil {
		t.Skip("chattr not available")
	}
	stateDir := t.TempDir()
	threads := filepath.Join(stateDir, "threads")
	if err := os.MkdirAll(threads, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chattr", "+i", threads).CombinedOutput(); err != nil {
		t.Skipf("chattr +i unsupported here: %v %s", err, out)
	}
	_ = exec.Command("chattr", "-i", threads).Run()
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", threads).Run() })

	// A slow agent leaves time to freeze the directory between the session
	// mapping and the permission request.
	agentSrv, err := demoagenttest.Start(t.Context(), "127.0.0.1:0", demoagent.Options{StepDelay: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agentSrv.Close() })
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ad := adapter.New(adapter.Options{Store: filestore.New(stateDir), Upstream: adapter.A2A(a2a.New(agentSrv.URL, "")), AllowedRoots: request.AllowedRoots([]string{root})})
	srv := httptest.NewServer(server.New(server.Options{Adapter: ad}))
	t.Cleanup(srv.Close)
	e := &env{Root: root}
	s := openStream(t, srv.URL+"/", e.body("thread-ro", "run-1", "permission", nil))
	s.waitFor(t, "CUSTOM") // the task and session mappings are durable now
	if out, err := exec.Command("chattr", "+i", threads).CombinedOutput(); err != nil {
		t.Fatalf("chattr: %v %s", err, out)
	}
	fin := s.rest(t)
	if fin["code"] != "STATE_PERSISTENCE_FAILED" || fin["message"] != "The interrupted execution state could not be committed." {
		t.Fatalf("got %v (%v)", fin, types(s.events))
	}
	for _, ev := range s.events {
		if ev["type"] == "RUN_FINISHED" {
			t.Fatal("an interrupt was announced although it is not durable")
		}
	}
	waitUntil(t, func() bool {
		for _, c := range agentSrv.Calls() {
			if c.Method == "CancelTask" {
				return true
			}
		}
		return false
	})
}

// TestUpstreamDown: an A2A server that does not answer at all ends the run
// with A2A_UNAVAILABLE after RUN_STARTED (protocol.md §4.4 step 8).
func TestUpstreamDown(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL + "/"
	dead.Close() // nothing listens on this port any more
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ad := adapter.New(adapter.Options{Store: filestore.New(t.TempDir()), Upstream: adapter.A2A(a2a.New(url, "")), AllowedRoots: request.AllowedRoots([]string{root})})
	srv := httptest.NewServer(server.New(server.Options{Adapter: ad}))
	t.Cleanup(srv.Close)
	e := &env{Root: root}
	r := post(t, srv.URL+"/", e.body("thread-down", "run-1", "hi", nil), map[string]string{"Accept-Language": "fr"})
	fin := last(r.Events)
	if r.Events[0]["type"] != "RUN_STARTED" || fin["code"] != "A2A_UNAVAILABLE" || fin["message"] != i18n.T(i18n.FR, "The local A2A execution service is unavailable.") {
		t.Fatalf("got %v", r.Events)
	}
	// The thread is released: the next turn is admitted (and fails alike).
	if r := post(t, srv.URL+"/", e.body("thread-down", "run-2", "hi", nil), nil); r.Status != 200 {
		t.Fatalf("next turn: %d", r.Status)
	}
}
