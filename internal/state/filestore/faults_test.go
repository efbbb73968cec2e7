package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// makeReadOnly makes dir refuse new entries. Root ignores mode bits, so for
// root it also sets the immutable attribute (a real kernel refusal);
// without chattr the test is skipped.
func makeReadOnly(t *testing.T, path string) {
	t.Helper()
	if err := os.Chmod(path, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(path, 0o700) })
	if os.Geteuid() != 0 {
		return
	}
	immutable(t, path)
}

func immutable(t *testing.T, path string) {
	t.Helper()
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("running as root and chattr +i is unavailable: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
}

func TestSaveReadOnlyThreadsDir(t *testing.T) {
	s, root := newStore(t)
	mustSave(t, s, sampleThread("thread-1"))
	p, _ := s.Path("thread-1")
	before, _ := os.ReadFile(p)
	dir := filepath.Join(root, "threads")
	makeReadOnly(t, dir)

	th := sampleThread("thread-1")
	th.Execution.PipelineSequence = 99
	err := saveLatest(context.Background(), s, th)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Save into a read-only directory: %v", err)
	}
	after, _ := os.ReadFile(p)
	if !bytes.Equal(before, after) {
		t.Fatal("old document changed")
	}
	if got := dirEntries(t, dir); !reflect.DeepEqual(got, []string{"thread-1.json"}) {
		t.Fatalf("threads/ = %v", got)
	}
	if got := mustLoad(t, s, "thread-1"); got.Execution.PipelineSequence != 3 {
		t.Fatalf("loaded sequence %d, want the old 3", got.Execution.PipelineSequence)
	}
}

// TestRenameRetriesOnPermissionError uses an immutable target file: the
// kernel refuses the rename with EPERM, which must be tried three times,
// leave the old file intact and remove the temp file. Needs root (chattr).
func TestRenameRetriesOnPermissionError(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chattr +i needs root")
	}
	s, root := newStore(t)
	mustSave(t, s, sampleThread("thread-1"))
	p, _ := s.Path("thread-1")
	before, _ := os.ReadFile(p)
	immutable(t, p)
	var attempts int
	s.rename = func(a, b string) error { attempts++; return os.Rename(a, b) }

	th := sampleThread("thread-1")
	th.Execution.PipelineSequence = 99
	if err := saveLatest(context.Background(), s, th); !errors.Is(err, ErrUnavailable) || !errors.Is(err, os.ErrPermission) {
		t.Fatalf("Save over an immutable file: %v", err)
	}
	if attempts != 3 {
		t.Fatalf("rename attempts = %d, want 3", attempts)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Fatal("old document changed")
	}
	if got := dirEntries(t, filepath.Join(root, "threads")); !reflect.DeepEqual(got, []string{"thread-1.json"}) {
		t.Fatalf("temp file left behind: %v", got)
	}
}

func TestSymlinkedFileRefused(t *testing.T) {
	s, root := newStore(t)
	mustSave(t, s, sampleThread("thread-0"))
	outside := filepath.Join(t.TempDir(), "outside.json")
	// A valid document of thread-1 outside the store: following the link
	// would load it.
	th := sampleThread("thread-1")
	data, err := Encode(th)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ := s.Path("thread-1")
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	if _, err := load(context.Background(), s, "thread-1"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Load through a symlink: %v", err)
	}
	th.Execution.PipelineSequence = 99
	if err := saveLatest(context.Background(), s, th); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Save over a symlink: %v", err)
	}
	if got, _ := os.ReadFile(outside); !bytes.Equal(got, data) {
		t.Fatal("symlink target was written")
	}
	if fi, _ := os.Stat(outside); fi.Mode().Perm() != 0o644 {
		t.Fatalf("symlink target mode changed to %o", fi.Mode().Perm())
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink replaced")
	}
	if got := dirEntries(t, filepath.Join(root, "threads")); len(got) != 2 {
		t.Fatalf("threads/ = %v", got)
	}
}

func TestSymlinkedThreadsDirRefused(t *testing.T) {
	s, root := newStore(t)
	elsewhere := t.TempDir()
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, "threads")); err != nil {
		t.Fatal(err)
	}
	if err := saveLatest(context.Background(), s, sampleThread("thread-1")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Save: %v", err)
	}
	if got := dirEntries(t, elsewhere); len(got) != 0 {
		t.Fatalf("wrote through the symlinked directory: %v", got)
	}
	if _, err := load(context.Background(), s, "thread-1"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Load: %v", err)
	}
}

func TestThreadsPathIsAFile(t *testing.T) {
	s, root := newStore(t)
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "threads"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := saveLatest(context.Background(), s, sampleThread("thread-1")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Save: %v", err)
	}
	if _, err := load(context.Background(), s, "thread-1"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Load: %v", err)
	}
}

func TestDirectoryInPlaceOfFile(t *testing.T) {
	s, _ := newStore(t)
	mustSave(t, s, sampleThread("thread-0"))
	p, _ := s.Path("thread-1")
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := load(context.Background(), s, "thread-1"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Load of a directory: %v", err)
	}
}

func TestConcurrentSavesOfDifferentThreads(t *testing.T) {
	s, root := newStore(t)
	const threads, rounds = 16, 5
	var wg sync.WaitGroup
	errs := make(chan error, threads*rounds)
	for i := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th := sampleThread(fmt.Sprintf("Thread-%d", i))
			for r := range rounds {
				th.Execution.PipelineSequence = int64(r)
				errs <- saveLatest(context.Background(), s, th)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range threads {
		id := fmt.Sprintf("Thread-%d", i)
		want := sampleThread(id)
		want.Execution.PipelineSequence = rounds - 1
		if got := mustLoad(t, s, id); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v", id, got)
		}
	}
	for _, name := range dirEntries(t, filepath.Join(root, "threads")) {
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			t.Errorf("unexpected file %s", name)
		}
	}
}
