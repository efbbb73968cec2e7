package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestSpareShorterDocument: a spare holding a longer document is cut to
// the new one's length.
func TestSpareShorterDocument(t *testing.T) {
	s, _ := newStore(t)
	long := sampleThread("thread-1")
	for i := range 200 {
		long.TerminalExecutionIDs = append(long.TerminalExecutionIDs, fmt.Sprintf("exec-old-%03d", i))
	}
	mustSave(t, s, long)
	mustSave(t, s, long) // the first document becomes the spare
	short := sampleThread("thread-1")
	mustSave(t, s, short)
	want, err := encodeThread(short)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Path("thread-1")
	if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
		t.Fatalf("stored %d bytes, want the %d of the short document", len(got), len(want))
	}
}

// TestLeftoverSparesRemoved: spares of an earlier process are deleted
// before the first save uses the directory (and the store's own by
// Close); anything but regular files is left alone.
func TestLeftoverSparesRemoved(t *testing.T) {
	s, root := newStore(t)
	dir := filepath.Join(root, spareDirName)
	if err := os.MkdirAll(filepath.Join(dir, "keep-dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".spare.json.abcdefgh.tmp"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustSave(t, s, sampleThread("thread-1"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := dirEntries(t, dir); len(got) != 1 || got[0] != "keep-dir" {
		t.Fatalf("spare directory holds %v", got)
	}
}

// TestCloseRemovesSpares: nothing of the pool stays after Close, which
// waits for the committer (it may be refilling the pool); a later save
// works again.
func TestCloseRemovesSpares(t *testing.T) {
	s, root := newStore(t)
	th := sampleThread("thread-1")
	mustSave(t, s, th)
	mustSave(t, s, th)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := dirEntries(t, filepath.Join(root, spareDirName)); len(got) != 0 {
		t.Fatalf("spares after Close: %v", got)
	}
	th.Execution.PipelineSequence = 7
	mustSave(t, s, th)
	if got := mustLoad(t, s, "thread-1").Execution.PipelineSequence; got != 7 {
		t.Fatalf("sequence %d after Close", got)
	}
}

// TestExchangeUnsupportedFallsBack uses a fake exchange that answers
// EINVAL, as a file system without renameat2 support does; that cannot be
// produced on demand here. Saves keep working with new files, and the
// exchange is not tried again.
func TestExchangeUnsupportedFallsBack(t *testing.T) {
	s, _ := newStore(t)
	var calls int
	s.exchange = func(string, string) error { calls++; return syscall.EINVAL }
	th := sampleThread("thread-1")
	for i := range 4 {
		th.Execution.PipelineSequence = int64(i)
		mustSave(t, s, th)
	}
	if calls != 1 {
		t.Fatalf("exchange tried %d times, want 1", calls)
	}
	if got := mustLoad(t, s, "thread-1").Execution.PipelineSequence; got != 3 {
		t.Fatalf("sequence %d", got)
	}
}

// TestSymlinkedSpareRefused: a spare replaced by a symlink is never written
// through; the save uses a new spare.
func TestSymlinkedSpareRefused(t *testing.T) {
	s, root := newStore(t)
	th := sampleThread("thread-1")
	mustSave(t, s, th)
	mustSave(t, s, th)
	spares := dirEntries(t, filepath.Join(root, spareDirName))
	if len(spares) != 1 {
		t.Fatalf("spares %v", spares)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("untouched"), 0o600); err != nil {
		t.Fatal(err)
	}
	spare := filepath.Join(root, spareDirName, spares[0])
	if err := os.Remove(spare); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, spare); err != nil {
		t.Fatal(err)
	}
	th.Execution.PipelineSequence = 9
	mustSave(t, s, th)
	if got, _ := os.ReadFile(outside); string(got) != "untouched" {
		t.Fatalf("wrote through the symlink: %q", got)
	}
	if got := mustLoad(t, s, "thread-1").Execution.PipelineSequence; got != 9 {
		t.Fatalf("sequence %d", got)
	}
}

// TestBatchAnswersEveryWriter: many writers of a few threads at once, each
// with the revision it loaded; per thread and round exactly one wins, the
// others get ErrConflict, and the stored document is the last winner's.
func TestBatchAnswersEveryWriter(t *testing.T) {
	s, _ := newStore(t)
	const threads, writers = 8, 12
	for i := range threads {
		mustSave(t, s, sampleThread(fmt.Sprintf("thread-%d", i)))
	}
	var wg sync.WaitGroup
	wins := make([]int, threads)
	var mu sync.Mutex
	for i := range threads {
		id := fmt.Sprintf("thread-%d", i)
		_, rev, err := s.Load(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for w := range writers {
			wg.Go(func() {
				th := sampleThread(id)
				th.Execution.PipelineSequence = int64(100 + w)
				_, err := s.Save(context.Background(), th, rev)
				switch {
				case err == nil:
					mu.Lock()
					wins[i]++
					mu.Unlock()
				case !errors.Is(err, ErrConflict):
					t.Errorf("%s writer %d: %v", id, w, err)
				}
			})
		}
	}
	wg.Wait()
	for i, n := range wins {
		if n != 1 {
			t.Errorf("thread-%d: %d writers won, want 1", i, n)
		}
		seq := mustLoad(t, s, fmt.Sprintf("thread-%d", i)).Execution.PipelineSequence
		if seq < 100 || seq >= 100+writers {
			t.Errorf("thread-%d: stored sequence %d is nobody's", i, seq)
		}
	}
	if names := dirEntries(t, filepath.Join(s.root, "threads")); len(names) != threads {
		t.Errorf("threads/ holds %d entries: %s", len(names), strings.Join(names, " "))
	}
}

// TestPoolRefilledAfterBurst: a burst that created 40 spares makes the
// idle committer refill the pool to 40 empty spares, which the next burst
// takes instead of creating files; a burst under prefillMin is not worth
// it.
func TestPoolRefilledAfterBurst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), spareDirName)
	p := &spares{dir: dir}
	take := func(n int) {
		for range n {
			name, f, ok := p.take([]byte("{}\n"))
			if !ok {
				t.Fatal("no spare")
			}
			f.Close()
			if err := os.Rename(name, name+".used"); err != nil { // a new thread's file
				t.Fatal(err)
			}
		}
	}
	take(prefillMin - 1)
	p.idle()
	if p.wantMore() {
		t.Fatalf("refill after a burst of %d", prefillMin-1)
	}
	take(40)
	p.idle()
	for p.wantMore() {
		p.prefill()
	}
	if len(p.names) != 40 {
		t.Fatalf("pool of %d after a burst of 40", len(p.names))
	}
	created := p.created
	take(40)
	if p.created != created {
		t.Fatalf("the second burst created %d files", p.created-created)
	}
}

// TestSparesOldestFirst: the file a save swaps out goes to the back of the
// pool, so a reader that opened it just before keeps an intact copy until
// every other spare has been used.
func TestSparesOldestFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), spareDirName)
	p := &spares{dir: dir}
	var made []string
	for range 3 {
		name, f, ok := p.take([]byte("{}\n"))
		if !ok {
			t.Fatal("no spare")
		}
		f.Close()
		made = append(made, name)
	}
	for _, name := range made {
		p.put(name) // oldest first: made[0], then made[1], made[2]
	}
	for i := range 3 {
		name, f, ok := p.take([]byte("{}\n"))
		if !ok {
			t.Fatal("no spare")
		}
		f.Close()
		if name != made[i] {
			t.Fatalf("take %d returned %s, want the oldest, %s", i, filepath.Base(name), filepath.Base(made[i]))
		}
	}
}
