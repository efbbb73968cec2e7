package reliability

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
)

// TestUntrackedTaskCancelledByContext: the adapter is killed (crash hook)
// after sending a new turn and before storing the task id of its first
// frame, while an external agent keeps that task working ("stall"). After
// the restart the thread's next turn finds the task by its context
// (ListTasks), cancels it and runs; it used to answer "Task is already
// working." until the agent ended the task (protocol.md §8.10).
func TestUntrackedTaskCancelledByContext(t *testing.T) {
	bin := crashBin(t)
	agent := startAgent(t, demoagent.Options{})
	stateDir, root := t.TempDir(), t.TempDir()
	cwd := filepath.Join(root, "ws")
	opts := serverOpts{stateDir: stateDir, root: root, agentURL: agent.URL, bin: bin}

	// Write 1 is the admission, write 2 the task and session ids.
	killed := startServer(t, serverOpts{stateDir: stateDir, root: root, agentURL: agent.URL, bin: bin, env: []string{"IAC_CODE_AGUI_CRASH_AT=2:before"}})
	_, _, _ = postQuiet(killed.URL, input("t-orphan", "run-1", "stall", cwd, nil))
	select {
	case <-killed.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the crash hook did not fire")
	}
	if !strings.Contains(killed.out.String(), "crashhook: SIGKILL at state write 2 (before)") {
		t.Fatalf("not killed by the hook:\n%s", tail(killed.out.String(), 2000))
	}
	var stalled string
	for _, c := range agent.Calls() {
		if c.Method == "SendStreamingMessage" {
			stalled = c.ContextID
		}
	}
	if stalled == "" {
		t.Fatal("the turn never reached the agent")
	}

	s := startServer(t, opts)
	status, evs, body := post(t, s.URL, input("t-orphan", "run-2", "hello", cwd, nil))
	if status != 200 || outcome(evs) != "success" {
		t.Fatalf("next turn: %d %s\n%.1500s", status, outcome(evs), body)
	}
	var listed, cancelled bool
	for _, c := range agent.Calls() {
		switch {
		case c.Method == "ListTasks":
			listed = true
		case c.Method == "CancelTask" && c.TaskID != "":
			cancelled = true
		}
	}
	if !listed || !cancelled {
		t.Fatalf("ListTasks called: %v, CancelTask called: %v (calls %+v)", listed, cancelled, agent.Calls())
	}
}
