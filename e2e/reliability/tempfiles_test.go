package reliability

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartRemovesLeftoverTempFiles: temporary files of a process killed
// mid-write are removed when the server starts (issue 15 finding 7); a
// fresh one and anything not named like the store's own are kept.
func TestStartRemovesLeftoverTempFiles(t *testing.T) {
	stateDir := t.TempDir()
	dir := filepath.Join(stateDir, "threads")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	plant := func(name string, mtime time.Time) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`{"partial":`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{".thread-a.json.k2j4_x9a.tmp", ".thread-b.json.00000000.tmp"} {
		plant(name, old)
	}
	plant(".thread-c.json.fresh000.tmp", time.Now().Add(time.Hour)) // newer than any start
	plant("operator-notes.tmp", old)
	s := startServer(t, serverOpts{stateDir: stateDir})
	s.stop()
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if len(left) != 2 || left[0] != ".thread-c.json.fresh000.tmp" || left[1] != "operator-notes.tmp" {
		t.Fatalf("left in threads/: %v", left)
	}
	if !strings.Contains(s.out.String(), "Removed leftover temporary state files") {
		t.Fatalf("no log line:\n%s", s.out.String())
	}
}
