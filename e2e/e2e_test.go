// Package e2e runs the real binary over loopback HTTP against its embedded
// A2A agent and drives it with the official @ag-ui/client 1.0.0 (run.mjs).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

var binary string

func TestMain(m *testing.M) { e2etest.Main(m, &binary, "../cmd/iac-code-agui", "-race") }

// Server is a running binary.
type Server struct {
	URL      string
	StateDir string
	Root     string
	cmd      *exec.Cmd
	out      *e2etest.Buffer
}

// startServer starts the binary on a free port with the embedded agent (no
// iac-code on PATH, no --a2a-url), a private state directory and workspace
// root, and waits for /health.
func startServer(t *testing.T, stateDir string, extraEnv ...string) *Server {
	t.Helper()
	return startServerWith(t, stateDir, nil, extraEnv...)
}

// startServerArgs starts the binary with extra command-line arguments.
func startServerArgs(t *testing.T, args []string) *Server {
	t.Helper()
	return startServerWith(t, "", args)
}

func startServerWith(t *testing.T, stateDir string, args []string, extraEnv ...string) *Server {
	t.Helper()
	return startServerIn(t, e2etest.FreePort(t), t.TempDir(), stateDir, args, extraEnv...)
}

// startServerOn starts the binary on a chosen port and workspace root (a
// replica must know its port to advertise it; replicas share a root).
func startServerOn(t *testing.T, port int, root string, args []string, extraEnv ...string) *Server {
	t.Helper()
	return startServerIn(t, port, root, "", args, extraEnv...)
}

func startServerIn(t *testing.T, port int, root, stateDir string, args []string, extraEnv ...string) *Server {
	t.Helper()
	if stateDir == "" {
		stateDir = t.TempDir()
	}
	cmd := exec.Command(binary, append([]string{"--port", strconv.Itoa(port), "--state-dir", stateDir}, args...)...)
	cmd.Env = append([]string{
		"PATH=/usr/bin:/bin",
		"HOME=" + t.TempDir(),
		"IAC_CODE_AGUI_ALLOWED_CWDS=" + root,
	}, extraEnv...)
	out := &e2etest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d/", port), StateDir: stateDir, Root: root, cmd: cmd, out: out}
	t.Cleanup(func() { s.Stop(t) })
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(s.URL + "health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("server did not become ready; output:\n%s", out.String())
	return nil
}

// Stop terminates the server gracefully.
func (s *Server) Stop(t *testing.T) {
	if s.cmd.ProcessState != nil || s.cmd.Process.Signal(syscall.Signal(0)) != nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	if t.Failed() {
		t.Logf("server output:\n%s", s.out.String())
	}
}

// Kill stops the server with SIGKILL, as a crash would.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// ensureClient installs the pinned npm packages when they are missing, so
// that `go test ./...` works on a fresh machine with Node.js and npm.
func ensureClient(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("node_modules/@ag-ui/client/package.json"); err == nil {
		return
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("npm is required for the @ag-ui/client conformance test: %v", err)
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
}

// TestOfficialClient runs every scenario of run.mjs with @ag-ui/client
// 1.0.0: each run must end with its expected terminal event and the client
// must print no [ag-ui] warning or error.
func TestOfficialClient(t *testing.T) {
	ensureClient(t)
	s := startServer(t, "")
	runOfficialClient(t, s.URL, filepath.Join(s.Root, "workspace"))
}

// runOfficialClient runs run.mjs against the adapter at url and checks
// every scenario's result line.
func runOfficialClient(t *testing.T, url, cwd string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "run.mjs")
	cmd.Env = append(os.Environ(), "AGUI_URL="+url, "AGUI_CWD="+cwd)
	out, err := cmd.CombinedOutput()
	passed := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			Name  string `json:"name"`
			OK    bool   `json:"ok"`
			MS    int    `json:"ms"`
			Error any    `json:"error"`
		}
		line := sc.Text()
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &r) != nil || r.Name == "" {
			continue
		}
		if r.OK {
			passed++
			t.Logf("scenario %s passed in %d ms", r.Name, r.MS)
		} else {
			t.Errorf("scenario %s failed: %v", r.Name, r.Error)
		}
	}
	if err != nil {
		t.Fatalf("harness: %v\n%s", err, out)
	}
	if passed < 10 {
		t.Fatalf("only %d scenarios passed\n%s", passed, out)
	}
}
