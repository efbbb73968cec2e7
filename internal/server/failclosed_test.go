package server_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// failingStore wraps the real file store and fails one chosen save. It is a
// fake on purpose: the tests run as root, so file permissions cannot make a
// real disk refuse one exact write of a run on demand.
type failingStore struct {
	state.Store
	mu     sync.Mutex
	saves  int
	failAt int
	// failIf, when set, picks the save to fail by its content instead:
	// the first document it accepts (how many saves come before depends
	// on how the agent's frames arrive, §4.6).
	failIf func(*state.Thread) bool
	failed bool
}

func (s *failingStore) Save(ctx context.Context, t *state.Thread, prev state.Revision) (state.Revision, error) {
	s.mu.Lock()
	s.saves++
	fail := s.saves == s.failAt
	if s.failIf != nil && !s.failed && s.failIf(t) {
		fail, s.failed = true, true
	}
	s.mu.Unlock()
	if fail {
		return state.NoRevision, errors.New("injected write failure")
	}
	return s.Store.Save(ctx, t, prev)
}

// TestFailClosedWrites: a failed recovery-critical write cancels the A2A
// task and ends with STATE_PERSISTENCE_FAILED, never announcing the state
// (protocol.md §9.3). The failed save is the first that stores the task id
// (alone, or with the session id when its frame was already read, §4.6),
// or the interrupt commit; the adapter's unit tests fail a separate
// session-id write, which depends on frame timing here.
func TestFailClosedWrites(t *testing.T) {
	cases := []struct {
		failIf func(*state.Thread) bool
		msg    string
	}{
		{func(d *state.Thread) bool { return d.Execution.TaskID != nil }, "The execution mapping could not be committed."},
		{func(d *state.Thread) bool { return len(d.Execution.Pending) > 0 }, "The interrupted execution state could not be committed."},
	}
	for _, c := range cases {
		t.Run(c.msg, func(t *testing.T) {
			e := newEnv(t, envOptions{wrap: func(s state.Store) state.Store { return &failingStore{Store: s, failIf: c.failIf} }})
			r := post(t, e.URL, e.body("thread-fc", "run-1", "Deploy it (permission)", nil), nil)
			fin := last(r.Events)
			if fin["type"] != "RUN_ERROR" || fin["code"] != "STATE_PERSISTENCE_FAILED" || fin["message"] != c.msg {
				t.Fatalf("got %v (%v)", fin, types(r.Events))
			}
			for _, ev := range r.Events {
				if ev["type"] == "RUN_FINISHED" {
					t.Fatal("an interrupt outcome was announced although it is not durable")
				}
			}
			waitUntil(t, func() bool {
				for _, call := range e.Agent.Calls() {
					if call.Method == "CancelTask" {
						return true
					}
				}
				return false
			})
		})
	}
}

// TestAdmissionWriteFailure: the first persist of an admission failing gives
// 503 STATE_UNAVAILABLE and nothing is kept in memory.
func TestAdmissionWriteFailure(t *testing.T) {
	e := newEnv(t, envOptions{wrap: func(s state.Store) state.Store { return &failingStore{Store: s, failAt: 1} }})
	r := post(t, e.URL, e.body("thread-aw", "run-1", "Create a VPC template", nil), nil)
	if code, _ := errorOf(t, r); r.Status != 503 || code != "STATE_UNAVAILABLE" {
		t.Fatalf("got %d %s", r.Status, code)
	}
	// The same runId is admitted afterwards: the failed admission was undone.
	if r := post(t, e.URL, e.body("thread-aw", "run-1", "Create a VPC template", nil), nil); r.Status != 200 {
		t.Fatalf("retry: %d %s", r.Status, r.Body)
	}
}
