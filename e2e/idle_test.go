package e2e

import (
	"path/filepath"
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
	s.waitExit(t, "after being idle", 10*time.Second)
}

// TestGracefulShutdown: SIGTERM stops the server cleanly (exit status 0).
func TestGracefulShutdown(t *testing.T) {
	s := startServerArgs(t, nil)
	s.terminate(t, 15*time.Second)
}
