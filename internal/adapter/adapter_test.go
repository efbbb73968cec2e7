package adapter_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

// pausing answers a new turn with a permission request and an answer with
// the end of the turn; GetTask shows the task waiting while it waits.
func pausing() *scripted {
	up := &scripted{}
	var mu sync.Mutex
	waitingOn := map[string]string{} // task → input id
	contexts := map[string]string{}
	n := 0
	up.send = func(p *a2a.SendParams) ([]*a2a.Event, error) {
		mu.Lock()
		defer mu.Unlock()
		if p.TaskID != "" { // an answer
			delete(waitingOn, p.TaskID)
			return turn(p.TaskID, p.ContextID, "s-"+p.ContextID), nil
		}
		n++
		task := "task-" + itoa(n)
		contexts[task] = p.ContextID
		waitingOn[task] = "perm-" + itoa(n)
		return []*a2a.Event{
			status(task, p.ContextID, "s-"+p.ContextID, "TASK_STATE_WORKING", nil),
			waiting(task, p.ContextID, "s-"+p.ContextID, waitingOn[task]),
		}, nil
	}
	up.getTask = func(task string) (*a2a.Event, error) {
		mu.Lock()
		defer mu.Unlock()
		ctxID, ok := contexts[task]
		if !ok {
			return nil, &a2a.RPCError{Code: a2a.CodeTaskNotFound, Message: "Task not found"}
		}
		ev := status(task, ctxID, "s-"+ctxID, "TASK_STATE_COMPLETED", nil)
		if id, ok := waitingOn[task]; ok {
			ev = waiting(task, ctxID, "s-"+ctxID, id)
		}
		ev.Kind = a2a.KindTask
		return ev, nil
	}
	return up
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func interruptsOf(t *testing.T, s *sink) []agui.Interrupt {
	t.Helper()
	fin, ok := s.last(t).(*agui.RunFinished)
	if !ok || fin.Outcome.Type != agui.OutcomeInterrupt {
		t.Fatalf("want an interrupt outcome, got %#v", s.last(t))
	}
	return fin.Outcome.Interrupts
}

func runError(t *testing.T, s *sink) *agui.RunError {
	t.Helper()
	e, ok := s.last(t).(*agui.RunError)
	if !ok {
		t.Fatalf("want RUN_ERROR, got %#v", s.last(t))
	}
	return e
}

// TestAdmission covers the refusals of protocol.md §3.6 in their order.
func TestAdmission(t *testing.T) {
	t.Parallel()
	f := newFixture(t, pausing(), fixtureOptions{})
	// thread-p is paused on a permission; thread-n ran a normal turn.
	if _, err := f.run(t, f.request(t, "thread-p", "run-1", "go", nil)); err != nil {
		t.Fatal(err)
	}
	other := f.request(t, "thread-p", "run-1", "something else", nil)
	mismatch := f.request(t, "thread-p", "run-9", "", allow("perm-1"))
	mismatch.Input.ForwardedProps = []byte(strings.Replace(string(mismatch.Input.ForwardedProps), `"inv-1"`, `"inv-2"`, 1))
	moved := f.request(t, "thread-p", "run-8", "", allow("perm-1"))
	moved.Input.ForwardedProps = []byte(strings.Replace(string(moved.Input.ForwardedProps), `/ws"`, `/elsewhere"`, 1))
	cases := []struct {
		name string
		req  adapter.Request
		code string
		http int
	}{
		{"replay of an admitted run", f.request(t, "thread-p", "run-1", "go", nil), "DUPLICATE_RUN_ID", 409},
		{"run id reused with another body", other, "RUN_ID_CONFLICT", 409},
		{"new turn while interrupts wait", f.request(t, "thread-p", "run-2", "next", nil), "RESUME_REQUIRED", 409},
		{"resume of an unknown thread", f.request(t, "thread-none", "run-1", "", allow("x")), "EXECUTION_LOST", 409},
		{"resume of another invocation", mismatch, "EXECUTION_LOST", 409},
		{"another workspace", moved, "THREAD_BINDING_CONFLICT", 409},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.a.Admit(context.Background(), c.req)
			var e *adapter.Error
			if !errors.As(err, &e) || e.Code != c.code || e.Status != c.http {
				t.Fatalf("got %v, want %d %s", err, c.http, c.code)
			}
		})
	}
	// A refused request changes nothing: the stored document still has
	// only run-1 and its interrupt.
	doc := loadDoc(t, f.store, "thread-p")
	if len(doc.RunDigests) != 1 || len(doc.Execution.Pending) != 1 {
		t.Fatalf("refusals changed the document: runs %v, pending %v", doc.RunDigests, doc.Execution.Pending)
	}
}

// TestThreadBusy: a second run of a thread while the first streams is
// THREAD_BUSY; once the first ends the thread is free.
func TestThreadBusy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, &scripted{}, fixtureOptions{})
	r, err := f.a.Admit(context.Background(), f.request(t, "thread-b", "run-1", "hi", nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Admit(context.Background(), f.request(t, "thread-b", "run-2", "hi", nil)); codeOf(err) != "THREAD_BUSY" {
		t.Fatalf("second run: %v", err)
	}
	r.Stream(context.Background(), &sink{})
	if _, err := f.run(t, f.request(t, "thread-b", "run-2", "hi", nil)); err != nil {
		t.Fatalf("after the first ended: %v", err)
	}
}

// TestPermissionRoundTrip: an interrupt is durable before it is announced,
// its answer reaches A2A once, and a replay is RESUME_ALREADY_APPLIED
// (protocol.md §5.4, §5.8–§5.10).
func TestPermissionRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFixture(t, pausing(), fixtureOptions{})
	s, err := f.run(t, f.request(t, "thread-r", "run-1", "go", nil))
	if err != nil {
		t.Fatal(err)
	}
	its := interruptsOf(t, s)
	if len(its) != 1 || its[0].ID != "perm-1" {
		t.Fatalf("interrupts %+v", its)
	}
	doc := loadDoc(t, f.store, "thread-r")
	p, ok := doc.Execution.Pending["perm-1"]
	if !ok || doc.Execution.TaskID == nil || *doc.Execution.TaskID != "task-1" || *doc.IacCodeSessionID != "s-"+doc.ContextID {
		t.Fatalf("stored %+v", doc.Execution)
	}
	if _, leaked := p.Value["secretArgument"]; leaked {
		t.Fatal("a key outside the projection allowlist was persisted")
	}

	s, err = f.run(t, f.request(t, "thread-r", "run-2", "", allow("perm-1")))
	if err != nil {
		t.Fatal(err)
	}
	if fin, ok := s.last(t).(*agui.RunFinished); !ok || fin.Outcome.Type != agui.OutcomeSuccess {
		t.Fatalf("resume ended %#v", s.last(t))
	}
	answers := 0
	for _, c := range f.up.calls {
		if c.Method == "SendStreamingMessage" && c.TaskID == "task-1" {
			answers++
			if len(c.Parts) != 1 || !strings.Contains(c.Parts[0], `"decision":"allow_once"`) || !strings.Contains(c.Parts[0], `"inputId":"perm-1"`) {
				t.Fatalf("answer sent %q", c.Parts)
			}
		}
	}
	if answers != 1 {
		t.Fatalf("answer sent %d times", answers)
	}
	doc = loadDoc(t, f.store, "thread-r")
	if d, ok := doc.AppliedDigest(doc.Execution.ExecutionID, "perm-1"); !ok || d == "" || len(doc.Execution.Pending) != 0 {
		t.Fatalf("after the answer: applied %v, pending %v", doc.AppliedResumeDigests, doc.Execution.Pending)
	}
	if doc.TerminalExecutionIDs[len(doc.TerminalExecutionIDs)-1] != doc.Execution.ExecutionID {
		t.Fatalf("execution not terminal: %v", doc.TerminalExecutionIDs)
	}
	// The same answer again, as a new run: already applied, nothing sent.
	s, err = f.run(t, f.request(t, "thread-r", "run-3", "", allow("perm-1")))
	if err != nil {
		t.Fatal(err)
	}
	if e := runError(t, s); e.Code != "RESUME_ALREADY_APPLIED" {
		t.Fatalf("replay: %+v", e)
	}
	if n := f.up.count("SendStreamingMessage"); n != 2 {
		t.Fatalf("%d streaming sends, want 2", n)
	}
}

// failingStore fails chosen saves of a real store. A fake on purpose: no
// real store fails one exact write on demand.
type failingStore struct {
	state.Store
	mu    sync.Mutex
	saves int
	fail  map[int]bool
}

func (s *failingStore) Save(ctx context.Context, t *state.Thread, prev state.Revision) (state.Revision, error) {
	s.mu.Lock()
	s.saves++
	fail := s.fail[s.saves]
	s.mu.Unlock()
	if fail {
		return state.NoRevision, errors.New("injected write failure")
	}
	return s.Store.Save(ctx, t, prev)
}

// TestFailClosed: every recovery-critical write that fails cancels the A2A
// task and ends STATE_PERSISTENCE_FAILED without announcing what it could
// not commit; memory keeps what the store keeps, so the thread stays
// usable (protocol.md §9.3). Saves: run-1 admission (1), task and session
// id (2, one write when the session id is in the same frame or in the next
// one already read; otherwise task id 2, session id 3), interrupt (3);
// run-2 admission (4), reconciliation (5), the answer's commit (6 when no
// reconciliation write happens).
func TestFailClosed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		fail   int
		resume bool
		// moved makes GetTask show a new input at resume, so the
		// reconciliation writes.
		moved bool
		msg   string
		// taskFrame starts the turn with iac-code's task frame, which
		// names the task but not the session; unbuffered makes the
		// session's frame arrive after the task frame was handled.
		taskFrame, unbuffered bool
	}{
		{"task id", 2, false, false, "The execution mapping could not be committed.", false, false},
		{"task id deferred to the session's frame", 2, false, false, "The execution mapping could not be committed.", true, false},
		{"task id alone", 2, false, false, "The execution mapping could not be committed.", true, true},
		{"session id", 3, false, false, "The execution session mapping could not be committed.", true, true},
		{"interrupt", 3, false, false, "The interrupted execution state could not be committed.", false, false},
		{"reconciliation", 5, true, true, "The resumed execution state could not be committed.", false, false},
		{"accepted answer", 5, true, false, "The accepted interrupt response could not be committed.", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			store := &failingStore{Store: state.NewMemStore(), fail: map[int]bool{c.fail: true}}
			up := pausing()
			up.unbuffered = c.unbuffered
			if c.taskFrame {
				send := up.send
				up.send = func(p *a2a.SendParams) ([]*a2a.Event, error) {
					evs, err := send(p)
					if err == nil && p.TaskID == "" {
						evs = append([]*a2a.Event{taskFrame(evs[0].TaskID, p.ContextID)}, evs...)
					}
					return evs, err
				}
			}
			if c.moved {
				get := up.getTask
				up.getTask = func(task string) (*a2a.Event, error) {
					ev, err := get(task)
					if err == nil {
						ev = waiting(task, ev.ContextID, "s-"+ev.ContextID, "perm-new")
						ev.Kind = a2a.KindTask
					}
					return ev, err
				}
			}
			f := newFixture(t, up, fixtureOptions{store: store})
			s, err := f.run(t, f.request(t, "thread-f", "run-1", "go", nil))
			if err != nil {
				t.Fatal(err)
			}
			if c.resume {
				if s, err = f.run(t, f.request(t, "thread-f", "run-2", "", allow("perm-1"))); err != nil {
					t.Fatal(err)
				}
			}
			e := runError(t, s)
			if e.Code != "STATE_PERSISTENCE_FAILED" || e.Message != c.msg {
				t.Fatalf("got %s %q, want %q", e.Code, e.Message, c.msg)
			}
			for _, ev := range s.evs {
				if fin, ok := ev.(*agui.RunFinished); ok && fin.Outcome.Type == agui.OutcomeInterrupt {
					t.Fatal("announced an interrupt that is not durable")
				}
			}
			if f.up.count("CancelTask") == 0 {
				t.Fatal("the A2A task was not cancelled")
			}
			// Nothing is left to answer, and the thread takes a new turn.
			doc := loadDoc(t, f.store, "thread-f")
			if len(doc.Execution.Pending) != 0 {
				t.Fatalf("pending left after failing closed: %v", doc.Execution.Pending)
			}
			if _, err := f.run(t, f.request(t, "thread-f", "run-3", "again", nil)); err != nil {
				t.Fatalf("thread unusable after failing closed: %v", err)
			}
		})
	}
}

// TestCancelLostUpdate is the regression test for the lost update of
// issue 8: thread A paused, cancelled while CancelTask is slow; thread B
// fills the one-entry cache; A is resumed as run-2 and completes; the
// cancel then finishes. run-2 and its applied answer must survive.
func TestCancelLostUpdate(t *testing.T) {
	t.Parallel()
	up := pausing()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	up.cancel = func(string) error {
		once.Do(func() { close(entered); <-release })
		return nil
	}
	f := newFixture(t, up, fixtureOptions{store: filestore.New(t.TempDir()), maxCached: 1})
	if _, err := f.run(t, f.request(t, "thread-a", "run-1", "go", nil)); err != nil {
		t.Fatal(err)
	}
	doc := loadDoc(t, f.store, "thread-a")
	type result struct {
		status string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		st, err := f.a.Cancel(context.Background(), doc.Execution.ExecutionID, "thread-a", "inv-1")
		done <- result{st, err}
	}()
	<-entered
	if _, err := f.run(t, f.request(t, "thread-b", "run-1", "go", nil)); err != nil {
		t.Fatal(err)
	}
	s, err := f.run(t, f.request(t, "thread-a", "run-2", "", allow("perm-1")))
	if err != nil {
		t.Fatal(err)
	}
	if fin, ok := s.last(t).(*agui.RunFinished); !ok || fin.Outcome.Type != agui.OutcomeSuccess {
		t.Fatalf("run-2 ended %#v", s.last(t))
	}
	close(release)
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("cancel: %v", r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not return")
	}
	after := loadDoc(t, f.store, "thread-a")
	if _, ok := after.RunDigests["run-2"]; !ok {
		t.Fatalf("run-2 lost: %v", after.RunDigests)
	}
	if _, ok := after.AppliedDigest(after.Execution.ExecutionID, "perm-1"); !ok {
		t.Fatalf("applied answer lost: %v", after.AppliedResumeDigests)
	}
}
