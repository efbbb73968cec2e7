package reliability

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkspaceInsideStateDirRefused: with an allowed root that contains
// the state directory, a cwd in threads/ is refused with the workspace
// error (issue 15 finding 10), and a sibling workspace still works.
func TestWorkspaceInsideStateDirRefused(t *testing.T) {
	root := t.TempDir()
	stateDir := filepath.Join(root, "state")
	s := startServer(t, serverOpts{stateDir: stateDir, root: root})
	// A first run creates threads/.
	if status, evs, body := post(t, s.URL, input("t-ok", "run-1", "hello", filepath.Join(root, "ws"), nil)); status != 200 || outcome(evs) != "success" {
		t.Fatalf("sibling workspace: %d %.300s", status, body)
	}
	for _, cwd := range []string{stateDir, filepath.Join(stateDir, "threads"), filepath.Join(root, "ws", "..", "state", "threads", "x")} {
		status, _, body := post(t, s.URL, input("t-state", "run-1", "hello", cwd, nil))
		if status != 400 || errorCode(body) != "INVALID_INPUT" || !strings.Contains(body, "Invalid iac-code forwarded properties.") {
			t.Errorf("cwd %s: %d %s", cwd, status, body)
		}
	}
}
