package reliability

import (
	"path/filepath"
	"testing"
)

// TestNewTurnAfterRestartWithEmbeddedAgent: after a SIGTERM or a SIGKILL
// of the binary (its embedded agent dies with it), a new turn on an old
// thread succeeds in the same iac-code session (issue 15 finding 4).
func TestNewTurnAfterRestartWithEmbeddedAgent(t *testing.T) {
	stateDir, root := t.TempDir(), t.TempDir()
	cwd := filepath.Join(root, "ws")
	a := startServer(t, serverOpts{stateDir: stateDir, root: root})
	status, evs, body := post(t, a.URL, input("t-restart", "run-1", "hello", cwd, nil))
	if status != 200 || outcome(evs) != "success" {
		t.Fatalf("first turn: %d %.300s", status, body)
	}
	session := sessionOf(evs)
	if session == "" {
		t.Fatal("no iac-code.session.v1 event")
	}
	for i, stop := range []func(*server){(*server).kill, (*server).stop} {
		stop(a)
		a = startServer(t, serverOpts{stateDir: stateDir, root: root})
		status, evs, body = post(t, a.URL, input("t-restart", []string{"run-2", "run-3"}[i], "hello again", cwd, nil))
		if status != 200 || outcome(evs) != "success" {
			t.Fatalf("turn after restart %d: %d %.600s", i, status, body)
		}
		if got := sessionOf(evs); got != session {
			t.Fatalf("session changed across a restart: %q → %q", session, got)
		}
	}
}

// sessionOf returns the sessionId of a run's iac-code.session.v1
// event.
func sessionOf(evs []map[string]any) string {
	for _, ev := range evs {
		if ev["name"] == "iac-code.session.v1" {
			v, _ := ev["value"].(map[string]any)
			s, _ := v["sessionId"].(string)
			return s
		}
	}
	return ""
}
