package adapter_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// The generic profile over the scripted upstream: exact event sequences
// (the JavaScript SDK's parked Task, a crash after the agent accepted an
// answer) that the SDK agents of e2e/generic_test.go cannot be made to
// produce at a chosen step.

func newGenericFixture(t *testing.T, up *scripted, store state.Store) *fixture {
	t.Helper()
	if store == nil {
		store = state.NewMemStore()
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := adapter.New(adapter.Options{Store: store, Upstream: up, AllowedRoots: request.AllowedRoots([]string{root}), Generic: true})
	return &fixture{a: a, up: up, store: store, root: root}
}

// genericRequest is a request of another front end: no iacCode.
func genericRequest(t *testing.T, thread, run, text string, resume []agui.ResumeEntry) adapter.Request {
	t.Helper()
	body := map[string]any{
		"threadId": thread, "runId": run, "state": map[string]any{}, "messages": []any{},
		"tools": []any{}, "context": []any{}, "forwardedProps": map[string]any{"copilotkit": map[string]any{"x": 1}},
	}
	if text != "" {
		body["messages"] = []any{map[string]any{"id": "m-" + run, "role": "user", "content": text}}
	}
	if resume != nil {
		body["resume"] = resume
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	in, err := agui.DecodeRunAgentInput(raw)
	if err != nil {
		t.Fatal(err)
	}
	return adapter.Request{Input: in, Body: raw, Lang: i18n.EN}
}

func agentStatus(task, ctxID, st, text string) *a2a.Event {
	ev := &a2a.Event{Kind: a2a.KindStatusUpdate, TaskID: task, ContextID: ctxID, Status: &a2a.Status{State: st}}
	if text != "" {
		ev.Status.Message = &a2a.Message{MessageID: "m-" + text, Role: a2a.RoleAgent, Parts: []a2a.Part{{Text: text}}}
	}
	return ev
}

func taskObject(task, ctxID, st string) *a2a.Event {
	return &a2a.Event{Kind: a2a.KindTask, TaskID: task, ContextID: ctxID, Status: &a2a.Status{State: st},
		History: []a2a.Message{{MessageID: "h", Role: a2a.RoleAgent, Parts: []a2a.Part{{Text: "What is your name?"}}}}}
}

// deltasOf lists the TEXT_MESSAGE_CONTENT deltas of a run.
func deltasOf(s *sink) []string {
	var out []string
	for _, e := range s.evs {
		if c, ok := e.(*agui.TextMessageContent); ok {
			out = append(out, c.Delta)
		}
	}
	return out
}

// askTurn answers a new turn with the JavaScript SDK's shape: a Task, then
// the question.
func askTurn(p *a2a.SendParams) []*a2a.Event {
	return []*a2a.Event{taskObject("T", p.ContextID, "TASK_STATE_SUBMITTED"), agentStatus("T", p.ContextID, "TASK_STATE_INPUT_REQUIRED", "What is your name?")}
}

// interruptOf returns the one interrupt of a run's interrupt outcome.
func interruptOf(t *testing.T, s *sink) agui.Interrupt {
	t.Helper()
	fin, ok := s.last(t).(*agui.RunFinished)
	if !ok || fin.Outcome.Type != agui.OutcomeInterrupt || len(fin.Outcome.Interrupts) != 1 {
		t.Fatalf("want one interrupt, got %#v", s.last(t))
	}
	return fin.Outcome.Interrupts[0]
}

func textAnswer(id, text string) []agui.ResumeEntry {
	return []agui.ResumeEntry{{InterruptID: id, Status: agui.ResumeResolved, Payload: json.RawMessage(`{"text":"` + text + `"}`)}}
}

// TestGenericParkedTask: the Task that opens the answer's stream, still
// waiting and carrying the question in its history, is neither a second
// interrupt nor text; the answer is one message with one text part on the
// task and the thread's context, without metadata.
func TestGenericParkedTask(t *testing.T) {
	var answered *a2a.SendParams
	up := &scripted{
		send: func(p *a2a.SendParams) ([]*a2a.Event, error) {
			if p.TaskID == "" {
				return askTurn(p), nil
			}
			answered = p
			return []*a2a.Event{
				taskObject("T", p.ContextID, "TASK_STATE_INPUT_REQUIRED"),
				agentStatus("T", p.ContextID, "TASK_STATE_WORKING", "you said: Ada"),
				agentStatus("T", p.ContextID, "TASK_STATE_COMPLETED", ""),
			}, nil
		},
		getTask: func(string) (*a2a.Event, error) {
			return taskObject("T", state.ContextIDFor("th"), "TASK_STATE_INPUT_REQUIRED"), nil
		},
	}
	f := newGenericFixture(t, up, nil)
	s, err := f.run(t, genericRequest(t, "th", "r1", "ask", nil))
	if err != nil {
		t.Fatal(err)
	}
	it := interruptOf(t, s)
	if it.Reason != "input_required" || it.Message != "What is your name?" || len(deltasOf(s)) != 0 {
		t.Fatalf("interrupt %+v, deltas %q", it, deltasOf(s))
	}
	s, err = f.run(t, genericRequest(t, "th", "r2", "", textAnswer(it.ID, "Ada")))
	if err != nil {
		t.Fatal(err)
	}
	if fin, ok := s.last(t).(*agui.RunFinished); !ok || fin.Outcome.Type != agui.OutcomeSuccess {
		t.Fatalf("resume ended %#v", s.last(t))
	}
	if got := deltasOf(s); !reflect.DeepEqual(got, []string{"you said: Ada"}) {
		t.Fatalf("deltas %q", got)
	}
	if answered == nil || answered.TaskID != "T" || answered.ContextID != state.ContextIDFor("th") || answered.Metadata != nil ||
		len(answered.Parts) != 1 || answered.Parts[0].Text() != "Ada" {
		t.Fatalf("answer sent %+v", answered)
	}
	if n := up.count("SendStreamingMessage"); n != 2 {
		t.Fatalf("%d SendStreamingMessage calls, want 2", n)
	}
	doc := loadDoc(t, f.store, "th")
	if doc.CWD != "a2a:generic" || doc.Execution.RosInvocationID != "a2a-generic" || len(doc.Execution.Pending) != 0 {
		t.Fatalf("document cwd %q, invocation %q, pending %v", doc.CWD, doc.Execution.RosInvocationID, doc.Execution.Pending)
	}
	if _, ok := doc.AppliedDigest(doc.Execution.ExecutionID, it.ID); !ok {
		t.Fatal("the answer is not recorded as applied")
	}
}

// TestGenericAnsweredBeforeCrash: a gateway that restarts after the agent
// accepted an answer but before its commit finds the task working, commits
// the answer without sending it again and follows the task.
func TestGenericAnsweredBeforeCrash(t *testing.T) {
	store := state.NewMemStore()
	up := &scripted{send: func(p *a2a.SendParams) ([]*a2a.Event, error) { return askTurn(p), nil }}
	s, err := newGenericFixture(t, up, store).run(t, genericRequest(t, "th", "r1", "ask", nil))
	if err != nil {
		t.Fatal(err)
	}
	it := interruptOf(t, s)
	ctxID := state.ContextIDFor("th")
	// The restarted process: the agent already has the answer.
	up2 := &scripted{
		getTask: func(string) (*a2a.Event, error) { return taskObject("T", ctxID, "TASK_STATE_WORKING"), nil },
		subscribe: func(string) ([]*a2a.Event, error) {
			return []*a2a.Event{taskObject("T", ctxID, "TASK_STATE_WORKING"), agentStatus("T", ctxID, "TASK_STATE_WORKING", "you said: Ada"), agentStatus("T", ctxID, "TASK_STATE_COMPLETED", "")}, nil
		},
	}
	f := newGenericFixture(t, up2, store)
	s, err = f.run(t, genericRequest(t, "th", "r2", "", textAnswer(it.ID, "Ada")))
	if err != nil {
		t.Fatal(err)
	}
	if fin, ok := s.last(t).(*agui.RunFinished); !ok || fin.Outcome.Type != agui.OutcomeSuccess {
		t.Fatalf("resume ended %#v", s.last(t))
	}
	if n := up2.count("SendStreamingMessage"); n != 0 {
		t.Fatalf("the answer was sent again (%d calls)", n)
	}
	if got := deltasOf(s); !reflect.DeepEqual(got, []string{"you said: Ada"}) {
		t.Fatalf("deltas %q", got)
	}
	doc := loadDoc(t, store, "th")
	if _, ok := doc.AppliedDigest(doc.Execution.ExecutionID, it.ID); !ok || len(doc.Execution.Pending) != 0 {
		t.Fatalf("applied %v, pending %v", doc.AppliedResumeDigests, doc.Execution.Pending)
	}
}

// TestGenericEndings: a Message result ends the turn with its text; a
// failed task's message is the RUN_ERROR's and is not streamed.
func TestGenericEndings(t *testing.T) {
	up := &scripted{send: func(p *a2a.SendParams) ([]*a2a.Event, error) {
		if p.Parts[0].Text() == "fail" {
			return []*a2a.Event{taskObject("F", p.ContextID, "TASK_STATE_SUBMITTED"), agentStatus("F", p.ContextID, "TASK_STATE_FAILED", "no quota left")}, nil
		}
		return []*a2a.Event{{Kind: a2a.KindMessage, ContextID: p.ContextID, Message: &a2a.Message{MessageID: "m", Role: a2a.RoleAgent, Parts: []a2a.Part{{Text: "Hello!"}}}}}, nil
	}}
	f := newGenericFixture(t, up, nil)
	s, err := f.run(t, genericRequest(t, "th", "r1", "hi", nil))
	if err != nil {
		t.Fatal(err)
	}
	if fin, ok := s.last(t).(*agui.RunFinished); !ok || fin.Outcome.Type != agui.OutcomeSuccess || !reflect.DeepEqual(deltasOf(s), []string{"Hello!"}) {
		t.Fatalf("message turn %#v, deltas %q", s.last(t), deltasOf(s))
	}
	s, err = f.run(t, genericRequest(t, "th", "r2", "fail", nil))
	if err != nil {
		t.Fatal(err)
	}
	re, ok := s.last(t).(*agui.RunError)
	if !ok || re.Code != adapter.CodeA2AExecutionFailed || re.Message != "no quota left" || len(deltasOf(s)) != 0 {
		t.Fatalf("failed turn %#v, deltas %q", s.last(t), deltasOf(s))
	}
}
