package adapter_test

import (
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
)

// idleClosing counts CloseIdleConnections calls on a scripted upstream.
type idleClosing struct {
	*scripted
	closed int
}

func (u *idleClosing) CloseIdleConnections() { u.closed++ }

// TestReleaseMemoryKeepsThreads: after ReleaseMemory the cached thread is
// the same document (its interrupt is answered as before) and the
// upstream's idle connections were closed.
func TestReleaseMemoryKeepsThreads(t *testing.T) {
	up := &idleClosing{scripted: pausing()}
	f := newFixture(t, up.scripted, fixtureOptions{})
	f.a = adapter.New(adapter.Options{Store: f.store, Upstream: up, AllowedRoots: request.AllowedRoots([]string{f.root})})
	if _, err := f.run(t, f.request(t, "thread-1", "run-1", "hi", nil)); err != nil {
		t.Fatal(err)
	}
	before := loadDoc(t, f.store, "thread-1")
	f.a.ReleaseMemory()
	if up.closed != 1 {
		t.Errorf("CloseIdleConnections called %d times, want 1", up.closed)
	}
	if _, err := f.run(t, f.request(t, "thread-1", "run-1", "hi", nil)); codeOf(err) != adapter.CodeDuplicateRunID {
		t.Errorf("replayed run id: %v, want %s", err, adapter.CodeDuplicateRunID)
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
