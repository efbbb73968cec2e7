package state

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestSavesReuseInodes: a thread saved again and again swaps its file with
// one spare, so the file system allocates two inodes in all and frees
// none (spare.go).
func TestSavesReuseInodes(t *testing.T) {
	s, root := newStore(t)
	th := sampleThread("thread-1")
	p, _ := s.Path("thread-1")
	var inodes []uint64
	for i := range 4 {
		th.Execution.PipelineSequence = int64(i)
		mustSave(t, s, th)
		inodes = append(inodes, inode(t, p))
		if got := mustLoad(t, s, "thread-1").Execution.PipelineSequence; got != int64(i) {
			t.Fatalf("save %d: loaded sequence %d", i, got)
		}
	}
	if inodes[0] == inodes[1] || inodes[2] != inodes[0] || inodes[3] != inodes[1] {
		t.Fatalf("inodes %v, want A B A B", inodes)
	}
	if got := dirEntries(t, filepath.Join(root, spareDirName)); len(got) != 1 {
		t.Fatalf("spares %v, want one", got)
	}
	if got := dirEntries(t, filepath.Join(root, "threads")); len(got) != 1 || got[0] != "thread-1.json" {
		t.Fatalf("threads/ holds %v", got)
	}
}
