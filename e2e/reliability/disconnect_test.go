package reliability

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent/demoagenttest"
	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// rawRun sends a run over a raw connection and closes it as soon as done
// returns true (polled every 100 µs, at most 5 s).
func rawRun(t testing.TB, url string, body map[string]any, done func() bool) {
	t.Helper()
	raw, _ := json.Marshal(body)
	conn, err := net.Dial("tcp", url[len("http://"):len(url)-1])
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(raw), raw)
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && !done(); {
		time.Sleep(100 * time.Microsecond)
	}
}

// sentTo reports whether the agent received a turn on a thread's context.
func sentTo(a *demoagenttest.Server, threadID string) func() bool {
	ctx := state.ContextIDFor(threadID)
	return func() bool {
		for _, c := range a.Calls() {
			if c.Method == "SendStreamingMessage" && c.ContextID == ctx {
				return true
			}
		}
		return false
	}
}

// countCalls counts the recorded calls of a method.
func countCalls(a *demoagenttest.Server, method string) int {
	n := 0
	for _, c := range a.Calls() {
		if c.Method == method {
			n++
		}
	}
	return n
}

// TestEarlyDisconnectCancelsTheTask: clients that close within
// milliseconds of sending a turn that stalls upstream (issue 15 finding 3)
// leave no task working at the agent: every started task is cancelled,
// and every thread takes a new turn afterwards (no "Task is already
// working.").
func TestEarlyDisconnectCancelsTheTask(t *testing.T) {
	// A pause before each scripted frame widens the window between the
	// adapter's request and the first frame, where the client leaves.
	agent := startAgent(t, demoagent.Options{StepDelay: 10 * time.Millisecond})
	s := startServer(t, serverOpts{agentURL: agent.URL})
	cwd := filepath.Join(s.Root, "ws")
	threads := 60
	if e2etest.Long() {
		threads = 300
	}
	var wg sync.WaitGroup
	for i := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half close the moment the agent has the request (before
			// any frame), half after a random few milliseconds.
			id := fmt.Sprintf("t-early-%d", i)
			done := sentTo(agent, id)
			if i%2 == 1 {
				until := time.Now().Add(time.Duration(rand.IntN(30_000)) * time.Microsecond)
				done = func() bool { return time.Now().After(until) }
			}
			rawRun(t, s.URL, input(id, "run-1", "stall now", cwd, nil), done)
		}()
	}
	wg.Wait()
	// Every turn that reached the agent gets its CancelTask (bounded wait:
	// the adapter keeps reading until the task id is known).
	deadline := time.Now().Add(30 * time.Second)
	var sent, cancelled int
	for time.Now().Before(deadline) {
		sent, cancelled = countCalls(agent, "SendStreamingMessage"), countCalls(agent, "CancelTask")
		if cancelled >= sent && activeRuns(t, s) == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d early disconnects: %d turns reached the agent, %d CancelTask calls", threads, sent, cancelled)
	if cancelled < sent {
		t.Fatalf("%d turns reached the agent but only %d CancelTask calls", sent, cancelled)
	}
	for i := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, evs, body := post(t, s.URL, input(fmt.Sprintf("t-early-%d", i), "run-2", "hello", cwd, nil))
			if status != 200 || outcome(evs) != "success" {
				t.Errorf("thread %d after an early disconnect: %d %.400s", i, status, body)
			}
		}()
	}
	wg.Wait()
}

// activeRuns reads the adapter's active-run gauge from /metrics.
func activeRuns(t testing.TB, s *server) int {
	t.Helper()
	res, err := client.Get(s.URL + "metrics")
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return int(e2etest.Sample(string(body), "iac_code_agui_active_runs"))
}
