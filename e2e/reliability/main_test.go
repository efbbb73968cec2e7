// Package reliability proves, against the real binary over loopback HTTP,
// that nothing is lost under faults, load and hostile input
// (docs/reliability.md): bounded ids and run history, leftover temporary
// files, workspaces in the state directory, early disconnects, restarts,
// memory per request, crash consistency and hostile requests.
//
// It owns only its tests and their helpers; the binary and the embedded
// agent it drives are the product's. Suites are bounded for CI; set
// IAC_CODE_AGUI_LONG=1 for the long mode.
package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent/demoagenttest"
	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// binary is the server under test, built once without the race detector:
// these suites kill, restart and load it many times, and e2e already runs
// a race-enabled build.
var binary string

func TestMain(m *testing.M) { e2etest.Main(m, &binary, "../../cmd/iac-code-agui") }

// server is one running binary.
type server struct {
	URL      string
	StateDir string
	Root     string // the allowed workspace root
	cmd      *exec.Cmd
	out      *e2etest.Buffer
	done     chan struct{}
}

type serverOpts struct {
	stateDir string
	root     string
	agentURL string // "" = the embedded agent
	env      []string
	port     int
	bin      string // "" = binary
}

// startServer starts the binary and waits for /health. It is stopped
// (SIGINT, then SIGKILL) when the test ends.
func startServer(t testing.TB, o serverOpts) *server {
	t.Helper()
	if o.stateDir == "" {
		o.stateDir = t.TempDir()
	}
	if o.root == "" {
		o.root = t.TempDir()
	}
	if o.port == 0 {
		o.port = e2etest.FreePort(t)
	}
	bin := binary
	if o.bin != "" {
		bin = o.bin
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(o.port), "--state-dir", o.stateDir)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + o.root, "IAC_CODE_AGUI_ALLOWED_CWDS=" + o.root}, o.env...)
	if o.agentURL != "" {
		cmd.Env = append(cmd.Env, "IAC_CODE_AGUI_A2A_URL="+o.agentURL, "IAC_CODE_AGUI_A2A_TOKEN=agent-token")
	}
	out := &e2etest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{URL: fmt.Sprintf("http://127.0.0.1:%d/", o.port), StateDir: o.stateDir, Root: o.root, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("server output (tail):\n%s", tail(out.String(), 4000))
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(s.URL + "health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s
			}
		}
		select {
		case <-s.done:
			t.Fatalf("server exited during start:\n%s", out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("server not ready:\n%s", out.String())
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// stop ends the server gracefully (SIGINT), then with SIGKILL.
func (s *server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// kill ends the server with SIGKILL, as a crash would.
func (s *server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// startAgent serves the embedded agent in this process with its calls
// recorded, so a test can count what reached A2A.
func startAgent(t testing.TB, opts demoagent.Options) *demoagenttest.Server {
	t.Helper()
	opts.Token = "agent-token"
	a, err := demoagenttest.Start(context.Background(), "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// input builds a RunAgentInput; text "" sends no message (a resume).
func input(threadID, runID, text, cwd string, resume []any) map[string]any {
	msgs := []any{}
	if text != "" {
		msgs = append(msgs, map[string]any{"id": "m-1", "role": "user", "content": text})
	}
	b := map[string]any{
		"threadId": threadID, "runId": runID, "state": map[string]any{}, "messages": msgs,
		"tools": []any{}, "context": []any{},
		"forwardedProps": map[string]any{"iacCode": map[string]any{"schemaVersion": 1, "rosInvocationId": "invocation-1", "cwd": cwd}},
	}
	if resume != nil {
		b["resume"] = resume
	}
	return b
}

// client is an HTTP client with a bound on every request, so that a hang
// fails the test instead of blocking it.
var client = &http.Client{Timeout: 60 * time.Second}

// post sends body (a value to marshal, or []byte as is) to url and
// returns the status, the SSE events (if any) and the raw answer.
func post(t testing.TB, url string, body any) (int, []map[string]any, string) {
	t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		raw, _ = json.Marshal(body)
	}
	res, err := client.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	all, _ := io.ReadAll(res.Body)
	evs := e2etest.Events(all)
	e2etest.CheckEvents(t, evs)
	return res.StatusCode, evs, string(all)
}

func last(evs []map[string]any) map[string]any {
	if len(evs) == 0 {
		return map[string]any{}
	}
	return evs[len(evs)-1]
}

// outcome returns "success", "interrupt", "error:<code>" or "" for an
// answer that ended without a terminal event.
func outcome(evs []map[string]any) string {
	fin := last(evs)
	switch fin["type"] {
	case "RUN_FINISHED":
		if o, ok := fin["outcome"].(map[string]any); ok {
			s, _ := o["type"].(string)
			return s
		}
		return "success"
	case "RUN_ERROR":
		return fmt.Sprintf("error:%v", fin["code"])
	}
	return ""
}

// errorCode returns the "code" of a JSON error answer (protocol.md §2.4).
func errorCode(body string) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	return e.Error.Code
}
