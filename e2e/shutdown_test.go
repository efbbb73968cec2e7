package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// liveRun is a run whose stream is read in the background.
type liveRun struct {
	started chan struct{} // closed at the first event of the awaited type
	done    chan struct{}
	status  int
	evs     []map[string]any
	err     error
}

// startRun posts body and reads its stream in the background.
func startRun(url string, body map[string]any, lang, awaited string) *liveRun {
	lr := &liveRun{started: make(chan struct{}), done: make(chan struct{})}
	raw, _ := json.Marshal(body)
	go func() {
		defer close(lr.done)
		var once sync.Once
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept-Language", lang)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			lr.err = err
			return
		}
		defer res.Body.Close()
		lr.status = res.StatusCode
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev map[string]any
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				lr.err = err
				return
			}
			lr.evs = append(lr.evs, ev)
			if ev["type"] == awaited {
				once.Do(func() { close(lr.started) })
			}
		}
		lr.err = sc.Err()
	}()
	return lr
}

func (lr *liveRun) wait(t *testing.T, what string, ch chan struct{}, within time.Duration) {
	t.Helper()
	select {
	case <-ch:
	case <-lr.done:
		if ch != lr.done {
			t.Fatalf("%s: the stream ended first: %v %v", what, lr.err, lr.evs)
		}
	case <-time.After(within):
		t.Fatalf("%s: not within %v", what, within)
	}
}

// terminate sends SIGTERM and waits for a clean exit.
func (s *Server) terminate(t *testing.T, within time.Duration) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitExit(t, "after SIGTERM", within)
}

// waitExit waits at most within for the server to exit with status 0.
func (s *Server) waitExit(t *testing.T, when string, within time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit %s: %v\n%s", when, err, s.out.String())
		}
	case <-time.After(within):
		t.Fatalf("no exit %s within %v", when, within)
	}
}

// TestShutdownEndsRunsRetryably (issue 29, item 6): a SIGTERM that finds a
// run still streaming after its grace ends it RUN_ERROR
// ADAPTER_SHUTTING_DOWN, in the request's language, logged as a warning,
// not an error; the thread it ran on and a thread waiting on an interrupt
// both go on in the next process. The agent is its own process, as an
// iac-code A2A server outlives the adapter.
func TestShutdownEndsRunsRetryably(t *testing.T) {
	agent := startDemoAgent(t)
	stateDir := t.TempDir()
	env := []string{"IAC_CODE_AGUI_A2A_URL=" + agent, "IAC_CODE_AGUI_A2A_TOKEN=agent-token"}
	a := startServer(t, stateDir, env...)
	cwd := filepath.Join(a.Root, "ws")
	_, evs, _ := runAGUI(t, a.URL, runInput("thread-sd-wait", "run-1", "Deploy (permission)", cwd, nil))
	it := interruptOf(t, evs)

	// "cancel me" streams until its task is cancelled: longer than any grace.
	live := startRun(a.URL, runInput("thread-sd-live", "run-1", "cancel me", cwd, nil), "pt", "TEXT_MESSAGE_CONTENT")
	live.wait(t, "first text", live.started, 20*time.Second)
	a.terminate(t, 20*time.Second)
	live.wait(t, "end of the stream", live.done, time.Second)
	fin := lastEvent(live.evs)
	if live.status != 200 || fin["type"] != "RUN_ERROR" || fin["code"] != "ADAPTER_SHUTTING_DOWN" ||
		fin["message"] != "O adaptador AG-UI está sendo encerrado; envie a solicitação novamente com um novo id de run." {
		t.Fatalf("the cut run ended %d %v (%v)", live.status, fin, live.err)
	}
	logs := a.out.String()
	if !strings.Contains(logs, `level=WARN msg="AG-UI run ended by the shutdown; the thread stays resumable"`) ||
		!strings.Contains(logs, "code=ADAPTER_SHUTTING_DOWN") {
		t.Fatalf("no shutdown warning in the log:\n%s", logs)
	}
	if strings.Contains(logs, "level=ERROR") || strings.Contains(logs, "unexpected EOF") {
		t.Fatalf("the shutdown logged an error:\n%s", logs)
	}

	b := startServer(t, stateDir, append(env, "IAC_CODE_AGUI_ALLOWED_CWDS="+a.Root)...)
	resume := []any{map[string]any{"interruptId": it["id"], "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}}
	status, evs, body := runAGUI(t, b.URL, runInput("thread-sd-wait", "run-2", "", cwd, resume))
	if fin := lastEvent(evs); status != 200 || fin["type"] != "RUN_FINISHED" || fin["outcome"].(map[string]any)["type"] != "success" ||
		!strings.Contains(body, `"type":"TOOL_CALL_RESULT"`) {
		t.Fatalf("resume in the next process: %d %v\n%s", status, fin, body)
	}
	// The cut thread takes its next turn: the task left running is
	// cancelled first (protocol.md §3.6), the turn runs to its end.
	status, evs, body = runAGUI(t, b.URL, runInput("thread-sd-live", "run-2", "hello again", cwd, nil))
	if fin := lastEvent(evs); status != 200 || fin["type"] != "RUN_FINISHED" {
		t.Fatalf("next turn of the cut thread: %d %v\n%s", status, fin, body)
	}
}

// TestShutdownWhileTheAgentStops: an upstream that breaks once the stop
// began (a managed iac-code a2a gets the same signal under systemd; here
// the agent process is killed) ends the run ADAPTER_SHUTTING_DOWN, a
// warning, rather than A2A_UNAVAILABLE with an ERROR.
func TestShutdownWhileTheAgentStops(t *testing.T) {
	agent, killAgent := startDemoAgentOn(t, e2etest.FreePort(t))
	s := startServer(t, "", "IAC_CODE_AGUI_A2A_URL="+agent, "IAC_CODE_AGUI_A2A_TOKEN=agent-token")
	live := startRun(s.URL, runInput("thread-sd-agent", "run-1", "cancel me", filepath.Join(s.Root, "ws"), nil), "en", "TEXT_MESSAGE_CONTENT")
	live.wait(t, "first text", live.started, 20*time.Second)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.out.String(), "AG-UI adapter shutting down") {
		if time.Now().After(deadline) {
			t.Fatalf("no shutdown line:\n%s", s.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	killAgent()
	live.wait(t, "end of the stream", live.done, 20*time.Second)
	fin := lastEvent(live.evs)
	if fin["type"] != "RUN_ERROR" || fin["code"] != "ADAPTER_SHUTTING_DOWN" ||
		fin["message"] != "The AG-UI adapter is shutting down; send the request again with a new run id." {
		t.Fatalf("the run ended %v (%v)\n%s", fin, live.err, s.out.String())
	}
	s.waitExit(t, "after SIGTERM", 20*time.Second)
	logs := s.out.String()
	if strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, `level=WARN msg="AG-UI run ended by the shutdown; the thread stays resumable"`) {
		t.Fatalf("want a warning and no error:\n%s", logs)
	}
}

// TestShutdownLetsRunsFinish: with the embedded agent (the README's first
// command), a run in progress at SIGTERM still ends as it would have,
// within the grace: the agent stops after the server, not with it (it
// used to end the run A2A_UNAVAILABLE with an ERROR "unexpected EOF").
func TestShutdownLetsRunsFinish(t *testing.T) {
	s := startServer(t, "")
	live := startRun(s.URL, runInput("thread-sd-slow", "run-1", "slow", filepath.Join(s.Root, "ws"), nil), "en", "TEXT_MESSAGE_CONTENT")
	live.wait(t, "first text", live.started, 20*time.Second)
	s.terminate(t, 20*time.Second)
	live.wait(t, "end of the stream", live.done, time.Second)
	if fin := lastEvent(live.evs); live.status != 200 || fin["type"] != "RUN_FINISHED" {
		t.Fatalf("the run ended %d %v (%v)\n%s", live.status, fin, live.err, s.out.String())
	}
	if logs := s.out.String(); strings.Contains(logs, "level=ERROR") {
		t.Fatalf("the shutdown logged an error:\n%s", logs)
	}
}
