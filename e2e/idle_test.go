package e2e

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestIdleShutdown: with --idle-shutdown the server exits by itself once no
// run is active for that long, and not while a run is active (protocol.md
// §2.10).
func TestIdleShutdown(t *testing.T) {
	s := startServerArgs(t, []string{"--idle-shutdown", "0.5"})
	cwd := filepath.Join(s.Root, "ws")
	start := time.Now()
	// "slow" streams for about 4 s, far longer than the idle limit.
	status, evs, _ := runAGUI(t, s.URL, runInput("thread-idle", "run-1", "slow", cwd, nil))
	if status != 200 || lastEvent(evs)["type"] != "RUN_FINISHED" {
		t.Fatalf("the server stopped during an active run: %d %v", status, lastEvent(evs))
	}
	if time.Since(start) < 3*time.Second {
		t.Fatalf("the slow run took only %v", time.Since(start))
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("idle exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop after being idle")
	}
}

// TestGracefulShutdown: SIGTERM stops the server cleanly (exit status 0).
func TestGracefulShutdown(t *testing.T) {
	s := startServerArgs(t, nil)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the server did not stop on SIGTERM")
	}
}
