package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestConditionalSave: both stores write only over the revision the
// writer loaded, so two writers can never lose each other's update.
func TestConditionalSave(t *testing.T) {
	for name, s := range map[string]Store{"file": NewFileStore(t.TempDir()), "memory": NewMemStore()} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			th := sampleThread("thread-1")
			r1, err := s.Save(ctx, th, NoRevision)
			if err != nil || r1 == NoRevision {
				t.Fatalf("first save: %q %v", r1, err)
			}
			if _, err := s.Save(ctx, th, NoRevision); !errors.Is(err, ErrConflict) {
				t.Fatalf("create over an existing document: %v, want ErrConflict", err)
			}
			got, rev, err := s.Load(ctx, "thread-1")
			if err != nil || rev != r1 {
				t.Fatalf("load: rev %q (saved %q) %v", rev, r1, err)
			}
			// Two writers loaded r1; the first wins, the second conflicts
			// and its change is not written.
			a, b := got.Clone(), got.Clone()
			a.RunDigests["run-a"] = "da"
			b.RunDigests["run-b"] = "db"
			r2, err := s.Save(ctx, a, r1)
			if err != nil || r2 == r1 {
				t.Fatalf("writer a: %q %v", r2, err)
			}
			if _, err := s.Save(ctx, b, r1); !errors.Is(err, ErrConflict) {
				t.Fatalf("writer b on a stale revision: %v, want ErrConflict", err)
			}
			now, rev, err := s.Load(ctx, "thread-1")
			if err != nil || rev != r2 || now.RunDigests["run-a"] != "da" || now.RunDigests["run-b"] != "" {
				t.Fatalf("after the race: rev %q, digests %v, %v", rev, now.RunDigests, err)
			}
			// The loser reloads and re-applies.
			now.RunDigests["run-b"] = "db"
			if _, err := s.Save(ctx, now, r2); err != nil {
				t.Fatalf("re-applied: %v", err)
			}
		})
	}
}

// TestConditionalSaveSeesOutsideWrites: the file store's revision is a
// digest of the bytes, so a document changed behind its back (an operator,
// another program) is a conflict too.
func TestConditionalSaveSeesOutsideWrites(t *testing.T) {
	ctx := context.Background()
	s := NewFileStore(t.TempDir())
	r1, err := s.Save(ctx, sampleThread("thread-1"), NoRevision)
	if err != nil {
		t.Fatal(err)
	}
	path, _ := s.Path("thread-1")
	other := sampleThread("thread-1")
	other.RunDigests["outside"] = "x"
	data, err := Encode(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(ctx, sampleThread("thread-1"), r1); !errors.Is(err, ErrConflict) {
		t.Fatalf("save over an outside write: %v, want ErrConflict", err)
	}
}

// TestPlantedFiles (reliability finding 8): a FIFO named like a thread file
// used to hang the open; a hard link to a file elsewhere had that file's
// mode changed. Both are refused as unavailable, at once, and the linked
// file is untouched.
func TestPlantedFiles(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := NewFileStore(root)
	if _, err := s.Save(ctx, sampleThread("seed"), NoRevision); err != nil {
		t.Fatal(err)
	}
	fifo, _ := s.Path("thread-fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := s.Load(ctx, "thread-fifo"); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("FIFO: %v, want ErrUnavailable", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}

	outside := filepath.Join(t.TempDir(), "precious")
	data, _ := Encode(sampleThread("thread-link"))
	if err := os.WriteFile(outside, data, 0o644); err != nil {
		t.Fatal(err)
	}
	link, _ := s.Path("thread-link")
	if err := os.Link(outside, link); err != nil {
		t.Skipf("link: %v", err)
	}
	if _, _, err := s.Load(ctx, "thread-link"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("hard link: %v, want ErrUnavailable", err)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("linked file changed: %v %v", fi.Mode(), err)
	}
}
