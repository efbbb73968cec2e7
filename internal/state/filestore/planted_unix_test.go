//go:build unix

package filestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestPlantedFiles (reliability finding 8): a FIFO named like a thread file
// used to hang the open; a hard link to a file elsewhere had that file's
// mode changed. Both are refused as unavailable, at once, and the linked
// file is untouched.
func TestPlantedFiles(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := New(root)
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
