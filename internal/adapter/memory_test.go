package adapter_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// loadCounting counts the loads of a store.
type loadCounting struct {
	state.Store
	loads atomic.Int64
}

func (s *loadCounting) Load(ctx context.Context, id string) (*state.Thread, state.Revision, error) {
	s.loads.Add(1)
	return s.Store.Load(ctx, id)
}

// idleClosing counts CloseIdleConnections calls on a scripted upstream.
type idleClosing struct {
	*scripted
	closed int
}

func (u *idleClosing) CloseIdleConnections() { u.closed++ }

// TestReleaseMemoryDropsIdleThreads: ReleaseMemory closes the upstream's
// idle connections and drops the idle cached thread, which is read back
// from the store on its next request and behaves as before: its run id is
// still a duplicate and its interrupt is answered.
func TestReleaseMemoryDropsIdleThreads(t *testing.T) {
	up := &idleClosing{scripted: pausing()}
	store := &loadCounting{Store: state.NewMemStore()}
	f := newFixture(t, up.scripted, fixtureOptions{store: store})
	f.a = adapter.New(adapter.Options{Store: store, Upstream: up, AllowedRoots: request.AllowedRoots([]string{f.root})})
	if _, err := f.run(t, f.request(t, "thread-1", "run-1", "hi", nil)); err != nil {
		t.Fatal(err)
	}
	before := loadDoc(t, f.store, "thread-1")
	loads := store.loads.Load()
	f.a.ReleaseMemory()
	if up.closed != 1 {
		t.Errorf("CloseIdleConnections called %d times, want 1", up.closed)
	}
	if _, err := f.run(t, f.request(t, "thread-1", "run-1", "hi", nil)); codeOf(err) != adapter.CodeDuplicateRunID {
		t.Errorf("replayed run id: %v, want %s", err, adapter.CodeDuplicateRunID)
	}
	if got := store.loads.Load() - loads; got != 1 {
		t.Errorf("%d loads of the thread after the release, want 1 (dropped, read back once)", got)
	}
	s, err := f.run(t, f.request(t, "thread-1", "run-2", "", allow("perm-1")))
	if err != nil {
		t.Fatal(err)
	}
	if fin, ok := s.last(t).(*agui.RunFinished); !ok || fin.Outcome.Type != agui.OutcomeSuccess {
		t.Fatalf("answer after the release ended with %#v", s.last(t))
	}
	if after := loadDoc(t, f.store, "thread-1"); after.Execution.ExecutionID != before.Execution.ExecutionID {
		t.Errorf("execution %q became %q", before.Execution.ExecutionID, after.Execution.ExecutionID)
	}
}
