package filestore

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestRemoveStaleTemps(t *testing.T) {
	s, root := newStore(t)
	if n, err := s.RemoveStaleTemps(StaleTempAge); n != 0 || err != nil {
		t.Fatalf("without threads/: %d, %v", n, err)
	}
	mustSave(t, s, sampleThread("thread-1"))
	dir := filepath.Join(root, "threads")
	old := time.Now().Add(-time.Minute)
	write := func(name string, age time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, age, age); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(".thread-1.json.abc_1234.tmp", old)                // stale: removed
	write(".aguiid~e4bc9ae8af9d2d31.json.zzzzzzzz.tmp", old) // stale: removed
	write(".thread-2.json.fresh123.tmp", time.Now())         // in flight: kept
	write(".thread-1.json.toolong12.tmp", old)               // not our pattern: kept
	write("notes.tmp", old)                                  // not ours: kept
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, ".thread-3.json.symlink1.tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".thread-4.json.dirdir12.tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	n, err := s.RemoveStaleTemps(StaleTempAge)
	if n != 2 || err != nil {
		t.Fatalf("removed %d, %v", n, err)
	}
	want := []string{".thread-1.json.toolong12.tmp", ".thread-2.json.fresh123.tmp", ".thread-3.json.symlink1.tmp",
		".thread-4.json.dirdir12.tmp", "notes.tmp", "thread-1.json"}
	if got := dirEntries(t, dir); !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	if data, err := os.ReadFile(outside); err != nil || string(data) != "keep" {
		t.Fatalf("symlink target touched: %q %v", data, err)
	}
	mustLoad(t, s, "thread-1")
}
