package adapter_test

import (
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// taskFrame is iac-code's first frame of a turn: the task, SUBMITTED,
// without metadata, so without the session id (upstream.md §3.3).
func taskFrame(task, ctxID string) *a2a.Event {
	return &a2a.Event{Kind: a2a.KindTask, TaskID: task, ContextID: ctxID, Status: &a2a.Status{State: "TASK_STATE_SUBMITTED"}}
}

// TestIdentitiesInOneWrite: the task id of the task frame and the session
// id of the next frame, already read, are persisted in one write; when the
// next frame has not arrived yet the task id is written alone at once
// (docs/benchmarks.md, which writes must be durable). Either way both are
// stored and the session event carries both.
func TestIdentitiesInOneWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		unbuffered bool
		saves      int
	}{
		// admission, identities, terminal mark
		{"next frame buffered", false, 3},
		// admission, task id, session id, terminal mark
		{"next frame not yet read", true, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			store := &failingStore{Store: state.NewMemStore()}
			up := &scripted{unbuffered: c.unbuffered}
			up.send = func(p *a2a.SendParams) ([]*a2a.Event, error) {
				return append([]*a2a.Event{taskFrame("task-1", p.ContextID)}, turn("task-1", p.ContextID, "session-1")...), nil
			}
			f := newFixture(t, up, fixtureOptions{store: store})
			s, err := f.run(t, f.request(t, "thread-i", "run-1", "go", nil))
			if err != nil {
				t.Fatal(err)
			}
			store.mu.Lock()
			saves := store.saves
			store.mu.Unlock()
			if saves != c.saves {
				t.Fatalf("%d saves, want %d", saves, c.saves)
			}
			// The run ended: the task id moved to lastTaskId (§8.10).
			doc := loadDoc(t, f.store, "thread-i")
			if doc.Execution.LastTaskID == nil || *doc.Execution.LastTaskID != "task-1" || doc.IacCodeSessionID == nil || *doc.IacCodeSessionID != "session-1" {
				t.Fatalf("stored identities: lastTaskId %v, session %v", doc.Execution.LastTaskID, doc.IacCodeSessionID)
			}
			var session map[string]any
			for _, ev := range s.evs {
				if c, ok := ev.(*agui.Custom); ok && c.Name == "iac-code.session.v1" {
					session, _ = c.Value.(map[string]any)
				}
			}
			if session["taskId"] != "task-1" || session["sessionId"] != "session-1" {
				t.Fatalf("session event %v", session)
			}
		})
	}
}
