package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/e2e/a2aagents/goagent"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
)

// The generic profile (--a2a-profile generic) in front of two third-party
// A2A agents built with the official SDKs, driven by the official
// @ag-ui/client through generic.mjs.

// genericScenarios are generic.mjs's default scenarios.
var genericScenarios = []string{"hello", "ask", "badAnswer", "cancelled", "auth", "fail", "twoTurns", "tools", "image", "slow", "cancelRoute", "subscribe"}

// startGoAgent serves the a2a-go agent on a free port.
func startGoAgent(t *testing.T) *goagent.Server {
	t.Helper()
	a, err := goagent.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// jsAgent is the @a2a-js/sdk agent, a node process.
type jsAgent struct {
	URL string
	cmd *exec.Cmd
	out *bytes.Buffer
}

// startJSAgent installs the JS agent's pinned packages when missing and
// starts it on a free port.
func startJSAgent(t *testing.T) *jsAgent {
	t.Helper()
	const dir = "a2aagents/jsagent"
	ensureNodeModules(t, dir, "@a2a-js/sdk")
	cmd := exec.Command("node", "agent.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PORT=0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &jsAgent{cmd: cmd, out: &bytes.Buffer{}}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				lines <- u
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case a.URL = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatal("the JS agent did not start")
	}
	return a
}

// answers reads the answers the JS agent received.
func (a *jsAgent) answers(t *testing.T) []string {
	t.Helper()
	res, err := http.Get(a.URL + "test/answers")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out []string
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// startGenericServer starts the binary with the generic profile in front
// of the agent at agentURL.
func startGenericServer(t *testing.T, stateDir, agentURL string, extraEnv ...string) *Server {
	t.Helper()
	return startServerWith(t, stateDir, []string{"--a2a-profile", "generic", "--a2a-url", agentURL}, extraEnv...)
}

// runGeneric runs generic.mjs with the scenarios and extra environment,
// fails the test for every failed scenario, and returns the output lines
// that are JSON objects.
func runGeneric(t *testing.T, url string, scenarios []string, env ...string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "generic.mjs")
	cmd.Env = append(append(os.Environ(), "AGUI_URL="+url, "SCENARIOS="+strings.Join(scenarios, ",")), env...)
	out, err := cmd.CombinedOutput()
	var lines []map[string]any
	passed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if !strings.HasPrefix(sc.Text(), "{") || json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		lines = append(lines, m)
		name, _ := m["name"].(string)
		if ok, has := m["ok"].(bool); has {
			if ok {
				passed[name] = true
			} else {
				t.Errorf("scenario %s failed: %v", name, m["error"])
			}
		}
	}
	if err != nil {
		t.Fatalf("generic.mjs: %v\n%s", err, out)
	}
	for _, s := range scenarios {
		if !passed[s] {
			t.Fatalf("scenario %s did not pass\n%s", s, out)
		}
	}
	return lines
}

// wantAnswersOnce checks that each answer reached the agent exactly once.
func wantAnswersOnce(t *testing.T, got []string, want ...string) {
	t.Helper()
	count := map[string]int{}
	for _, a := range got {
		count[a]++
	}
	for _, w := range want {
		if count[w] != 1 {
			t.Errorf("answer %q reached the agent %d times (all: %q), want once", w, count[w], got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the agent received %q, want %q", got, want)
	}
}

// TestGenericGoAgent: every scenario against the a2a-go agent.
func TestGenericGoAgent(t *testing.T) {
	ensureClient(t)
	agent := startGoAgent(t)
	s := startGenericServer(t, "", agent.URL)
	runGeneric(t, s.URL, genericScenarios, "AGENT_URL="+agent.URL)
	wantAnswersOnce(t, agent.Answers(), "Ada", "Grace", "Lin")
	if strings.Contains(s.out.String(), "Authorization") {
		t.Error("a log line names an Authorization header")
	}
	// A generic agent has no session-handoff service: the gateway says so
	// itself and proxies nothing to the agent.
	res, err := http.Get(s.URL + "iac-code/handoff/capabilities")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `"supported":false`) {
		t.Fatalf("handoff capabilities: %d %s", res.StatusCode, b)
	}
}

// TestGenericJSAgent: every scenario against the @a2a-js/sdk agent, which
// opens every stream with a Task and never publishes the canceled state of
// a waiting task itself.
func TestGenericJSAgent(t *testing.T) {
	ensureClient(t)
	agent := startJSAgent(t)
	s := startGenericServer(t, "", agent.URL)
	runGeneric(t, s.URL, genericScenarios, "AGENT_URL="+agent.URL)
	wantAnswersOnce(t, agent.answers(t), "Ada", "Grace", "Lin")
}

// TestGenericRestartBetweenInterruptAndResume: the gateway is killed
// (SIGKILL) after the interrupt; a new process on the same store takes
// the answer, which reaches the agent once. Both agents, file store and
// Redis.
func TestGenericRestartBetweenInterruptAndResume(t *testing.T) {
	ensureClient(t)
	type agent struct {
		url     string
		answers func() []string
	}
	agents := map[string]func(t *testing.T) agent{
		"go": func(t *testing.T) agent {
			a := startGoAgent(t)
			return agent{a.URL, a.Answers}
		},
		"js": func(t *testing.T) agent {
			a := startJSAgent(t)
			return agent{a.URL, func() []string { return a.answers(t) }}
		},
	}
	stores := map[string]func(t *testing.T) []string{
		"file": func(*testing.T) []string { return nil },
		"redis": func(t *testing.T) []string {
			return []string{"IAC_CODE_AGUI_STATE_STORE=" + redistest.URL(t), fmt.Sprintf("IAC_CODE_AGUI_REDIS_KEY_PREFIX=generic-%d:", time.Now().UnixNano())}
		},
	}
	for an, startAgent := range agents {
		for sn, store := range stores {
			t.Run(an+"/"+sn, func(t *testing.T) {
				a := startAgent(t)
				dir, env := t.TempDir(), store(t)
				s := startGenericServer(t, dir, a.url, env...)
				var info map[string]any
				for _, l := range runGeneric(t, s.URL, []string{"interrupt"}) {
					if l["name"] == "interrupt-info" {
						info = l
					}
				}
				if info == nil {
					t.Fatal("no interrupt-info line")
				}
				s.Kill()
				if sn == "file" {
					// The state is the thread document the first process wrote.
					if entries, _ := os.ReadDir(dir + "/threads"); len(entries) == 0 {
						t.Fatal("no thread document in the state directory")
					}
				}
				s2 := startGenericServer(t, dir, a.url, env...)
				it, _ := json.Marshal(info["interrupt"])
				runGeneric(t, s2.URL, []string{"resumeAfter"}, "THREAD_ID="+info["threadId"].(string), "INTERRUPT="+string(it))
				wantAnswersOnce(t, a.answers(), "after a crash")
			})
		}
	}
}
