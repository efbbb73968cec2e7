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
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// URL returns the redis:// URL of a server for t.
func URL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("IAC_CODE_AGUI_TEST_REDIS_URL"); u != "" {
		return u
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed (CI must install it)")
		}
		t.Skip("redis-server is not installed")
	}
	port := freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--appendonly", "yes", "--appendfsync", "everysec", "--dir", dir, "--save", "")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not start: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Sprintf("redis://%s/0", addr)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
