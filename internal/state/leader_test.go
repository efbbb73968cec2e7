package state

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoneSaveCommittedByItsCaller: a save that finds the committer idle
// is committed on its caller's goroutine (no drain goroutine), is in place
// when Save returns, and leaves the committer idle.
func TestLoneSaveCommittedByItsCaller(t *testing.T) {
	s, _ := newStore(t)
	var stacks []string
	s.rename = func(from, to string) error {
		buf := make([]byte, 16<<10)
		stacks = append(stacks, string(buf[:runtime.Stack(buf, false)]))
		return os.Rename(from, to)
	}
	th := sampleThread("thread-1")
	th.Execution.PipelineSequence = 5
	rev, err := s.Save(context.Background(), th, NoRevision)
	if err != nil {
		t.Fatal(err)
	}
	if len(stacks) != 1 {
		t.Fatalf("%d renames, want 1", len(stacks))
	}
	if !strings.Contains(stacks[0], "state.(*FileStore).submit(") || strings.Contains(stacks[0], "state.(*FileStore).drain(") {
		t.Fatalf("renamed by another goroutine than the saver's:\n%s", stacks[0])
	}
	got, gotRev, err := s.Load(context.Background(), "thread-1")
	if err != nil || gotRev != rev || got.Execution.PipelineSequence != 5 {
		t.Fatalf("Load = sequence %v, %q, %v; want 5, %q", got, gotRev, err, rev)
	}
	s.commits.mu.Lock()
	running := s.commits.running
	s.commits.mu.Unlock()
	if running {
		t.Fatal("committer still running after a lone save")
	}
}

// TestLeaderDoesNotWaitForLaterBatches: the saver that leads a burst
// returns once its own batch is committed; a save queued meanwhile is
// committed by a drain goroutine, after the leader's and never beside it.
func TestLeaderDoesNotWaitForLaterBatches(t *testing.T) {
	s, _ := newStore(t)
	aRenaming, bQueued, releaseB := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var inFlight, maxInFlight atomic.Int32
	s.rename = func(from, to string) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		if n > maxInFlight.Load() {
			maxInFlight.Store(n)
		}
		switch {
		case strings.Contains(to, "thread-a"):
			close(aRenaming)
			<-bQueued
		case strings.Contains(to, "thread-b"):
			<-releaseB
		}
		return os.Rename(from, to)
	}
	save := func(id string) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := s.Save(context.Background(), sampleThread(id), NoRevision)
			done <- err
		}()
		return done
	}
	aDone := save("thread-a")
	<-aRenaming
	bDone := save("thread-b")
	waitFor(t, func() bool {
		s.commits.mu.Lock()
		defer s.commits.mu.Unlock()
		return len(s.commits.queue) == 1
	})
	close(bQueued)
	select {
	case err := <-aDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the leader waits for the batch queued behind it")
	}
	select {
	case err := <-bDone:
		t.Fatalf("thread-b answered (%v) before its rename", err)
	default:
	}
	close(releaseB)
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	if m := maxInFlight.Load(); m != 1 {
		t.Fatalf("%d renames at once, want 1", m)
	}
	mustLoad(t, s, "thread-a")
	mustLoad(t, s, "thread-b")
}

// TestConcurrentSaversCommitOneAtATime: savers racing to lead never commit
// at the same time, and every save is answered and stored.
func TestConcurrentSaversCommitOneAtATime(t *testing.T) {
	s, _ := newStore(t)
	var inFlight, maxInFlight atomic.Int32
	track := func(op func() error) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(50 * time.Microsecond) // widen the window for a second committer
		return op()
	}
	s.rename = func(from, to string) error { return track(func() error { return os.Rename(from, to) }) }
	exchange := s.exchange
	s.exchange = func(from, to string) error { return track(func() error { return exchange(from, to) }) }
	const savers, rounds = 16, 5
	var wg sync.WaitGroup
	for g := range savers {
		wg.Go(func() {
			id := fmt.Sprintf("thread-%d", g)
			prev := NoRevision
			for r := range rounds {
				th := sampleThread(id)
				th.Execution.PipelineSequence = int64(r)
				rev, err := s.Save(context.Background(), th, prev)
				if err != nil {
					t.Errorf("%s round %d: %v", id, r, err)
					return
				}
				prev = rev
				time.Sleep(time.Duration(g%3) * 100 * time.Microsecond)
			}
		})
	}
	wg.Wait()
	if m := maxInFlight.Load(); m != 1 {
		t.Fatalf("%d renames at once, want 1", m)
	}
	for g := range savers {
		if got := mustLoad(t, s, fmt.Sprintf("thread-%d", g)).Execution.PipelineSequence; got != rounds-1 {
			t.Errorf("thread-%d: sequence %d, want %d", g, got, rounds-1)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLeaderPanicEndsTheProcess: a panic while a saver commits on its own
// goroutine is not swallowed by net/http's recovery of a handler (which
// would leave the committer running and every later save waiting): the
// process dies with it. The child is this test binary serving one request.
func TestLeaderPanicEndsTheProcess(t *testing.T) {
	if os.Getenv("STATE_LEADER_PANIC_CHILD") == "1" {
		leaderPanicChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLeaderPanicEndsTheProcess$")
	cmd.Env = append(os.Environ(), "STATE_LEADER_PANIC_CHILD=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("child ended with %v, want exit status 2 (panic):\n%s", err, out)
	}
	if !strings.Contains(string(out), "panic: state: commit: rename exploded") {
		t.Fatalf("child output lacks the commit's panic:\n%s", out)
	}
}

func leaderPanicChild(t *testing.T) {
	s := NewFileStore(filepath.Join(t.TempDir(), "agui"))
	s.rename = func(string, string) error { panic("rename exploded") }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = s.Save(r.Context(), sampleThread("thread-1"), NoRevision)
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
	}
	time.Sleep(5 * time.Second) // the process is gone before this ends
	t.Fatal("the process survived the commit's panic")
}
