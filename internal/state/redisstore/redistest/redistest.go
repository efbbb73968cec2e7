// Package redistest gives tests a real Redis server: the one named by
// IAC_CODE_AGUI_TEST_REDIS_URL (which .ci/run starts), else a private
// redis-server started on a free loopback port with AOF on and stopped
// when the test ends. Without either, a test is skipped, except under
// CI=true, where it fails: CI must never pass by skipping Redis.
//
// It owns only the test server's life; it must not be imported by
// product code.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// URL returns the redis:// URL of a server for t: the shared one when
// IAC_CODE_AGUI_TEST_REDIS_URL is set, else a private one.
func URL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("IAC_CODE_AGUI_TEST_REDIS_URL"); u != "" {
		return u
	}
	return Start(t, "everysec").URL
}

// Server is a private redis-server that a test may kill and restart.
type Server struct {
	URL   string
	bin   string
	port  int
	dir   string
	fsync string

	mu  sync.Mutex
	cmd *exec.Cmd
	out *strings.Builder
}

// Start starts a private redis-server with AOF and the given appendfsync
// policy ("always", "everysec"), stopped when the test ends.
func Start(t testing.TB, fsync string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed (CI must install it)")
		}
		t.Skip("redis-server is not installed")
	}
	s := &Server{bin: bin, port: e2etest.FreePort(t), dir: t.TempDir(), fsync: fsync}
	s.URL = fmt.Sprintf("redis://127.0.0.1:%d/0", s.port)
	s.start(t)
	t.Cleanup(s.Kill)
	return s
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--appendonly", "yes", "--appendfsync", s.fsync, "--dir", s.dir, "--save", "")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.cmd, s.out = cmd, out
	s.mu.Unlock()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	for deadline := time.Now().Add(10 * time.Second); !ready(addr); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not start: %s", out.String())
		}
	}
}

// ready reports whether the server at addr answers PING with PONG: a
// server still replaying its AOF accepts connections but answers
// -LOADING.
func ready(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// Pid is the server's process id (0 when it is not running), for
// benchmarks that report its CPU time.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Kill stops the server with SIGKILL, as a crash would.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

// Restart starts the server again on the same port and data directory,
// replaying its AOF.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	s.start(t)
}
