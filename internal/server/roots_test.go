package server_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRootCreatedAfterStart: an allowed root that did not exist when the
// server started is honoured once it exists, without a restart
// (protocol.md §3.4 step 3).
func TestRootCreatedAfterStart(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	later := filepath.Join(base, "later")
	e := newEnv(t, envOptions{roots: []string{later}})
	body := e.body("thread-root", "run-1", "hi", map[string]any{"cwd": filepath.Join(later, "ws")})
	r := post(t, e.URL, body, nil)
	if code, msg := errorOf(t, r); r.Status != 400 || code != "INVALID_INPUT" || msg != "Invalid iac-code forwarded properties." {
		t.Fatalf("before the root exists: %d %s %s", r.Status, code, msg)
	}
	if err := os.Mkdir(later, 0o700); err != nil {
		t.Fatal(err)
	}
	r = post(t, e.URL, body, nil)
	assertSuccess(t, r)
	if fi, err := os.Stat(filepath.Join(later, "ws")); err != nil || !fi.IsDir() {
		t.Fatalf("workspace not created: %v", err)
	}
}
