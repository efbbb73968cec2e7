package adapter_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

// asking answers a new turn with the inputs build returns for the task,
// and any answer with the end of the turn; GetTask shows the task waiting
// on them until one answer arrived.
func asking(build func(task, ctxID string) []map[string]any) *scripted {
	up := &scripted{}
	var mu sync.Mutex
	waitingOn := map[string][]map[string]any{}
	contexts := map[string]string{}
	n := 0
	waitEv := func(task, ctxID string, ins []map[string]any) *a2a.Event {
		iac := map[string]any{}
		if len(ins) > 0 {
			iac["input"] = ins[0]
		}
		if len(ins) > 1 {
			perms := make([]any, 0, len(ins)-1)
			for _, in := range ins[1:] {
				perms = append(perms, in)
			}
			iac["pendingPermissions"] = perms
		}
		return status(task, ctxID, "s-"+ctxID, "TASK_STATE_INPUT_REQUIRED", iac)
	}
	up.send = func(p *a2a.SendParams) ([]*a2a.Event, error) {
		mu.Lock()
		defer mu.Unlock()
		if p.TaskID != "" {
			delete(waitingOn, p.TaskID)
			return turn(p.TaskID, p.ContextID, "s-"+p.ContextID), nil
		}
		n++
		task := "task-" + itoa(n)
		contexts[task] = p.ContextID
		waitingOn[task] = build(task, p.ContextID)
		return []*a2a.Event{
			status(task, p.ContextID, "s-"+p.ContextID, "TASK_STATE_WORKING", nil),
			waitEv(task, p.ContextID, waitingOn[task]),
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
		if ins, ok := waitingOn[task]; ok {
			ev = waitEv(task, ctxID, ins)
		}
		ev.Kind = a2a.KindTask
		return ev, nil
	}
	return up
}

// textsSent returns the text parts of the streamed messages on task.
func (s *scripted) textsSent(task string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range s.calls {
		if c.Method == "SendStreamingMessage" && c.TaskID == task {
			out = append(out, c.Parts...)
		}
	}
	return out
}

func resolved(id, payload string) []agui.ResumeEntry {
	return []agui.ResumeEntry{{InterruptID: id, Status: agui.ResumeResolved, Payload: json.RawMessage(payload)}}
}

// TestOptionIDsResolveLikeTheSchema: every selectedId the responseSchema
// offers — a -2 suffix for a duplicate id, a candidate_index, option-<n>
// for an empty id, a non-object option — sends that option's label, not
// the id itself (protocol.md §5.2, §5.8).
func TestOptionIDsResolveLikeTheSchema(t *testing.T) {
	t.Parallel()
	options := []any{
		map[string]any{"id": "x", "label": "First"},
		map[string]any{"id": "x", "label": "Second"},
		map[string]any{"candidate_index": 3.0, "label": "Third"},
		map[string]any{"id": "", "name": "Fourth"},
		"plain",
		"plain",
	}
	cases := map[string]string{"x": "First", "x-2": "Second", "3": "Third", "option-4": "Fourth", "plain": "plain", "plain-2": "plain", "nope": "nope"}
	for id, want := range cases {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, asking(func(task, ctxID string) []map[string]any {
				return []map[string]any{{"schemaVersion": 1, "kind": "ask_user_question", "required": true, "requestTaskId": task,
					"contextId": ctxID, "inputId": "ask-toolu_q", "toolUseId": "toolu_q", "prompt": "Which?", "options": options,
					"allowFreeText": true}}
			}), fixtureOptions{})
			s, err := f.run(t, f.request(t, "thread-o", "run-1", "go", nil))
			if err != nil {
				t.Fatal(err)
			}
			interruptsOf(t, s)
			s, err = f.run(t, f.request(t, "thread-o", "run-2", "", resolved("ask-toolu_q", `{"selectedId":"`+id+`"}`)))
			if err != nil {
				t.Fatal(err)
			}
			if id == "nope" { // not in the schema: refused, nothing sent
				if e := runError(t, s); e.Code != "RESUME_PAYLOAD_INVALID" || len(f.up.textsSent("task-1")) != 0 {
					t.Fatalf("unknown id: %+v, sent %q", e, f.up.textsSent("task-1"))
				}
				return
			}
			if fin, ok := s.last(t).(*agui.RunFinished); !ok || fin.Outcome.Type != agui.OutcomeSuccess {
				t.Fatalf("resume ended %#v", s.last(t))
			}
			if got := f.up.textsSent("task-1"); len(got) != 1 || got[0] != want {
				t.Fatalf("sent %q, want [%q]", got, want)
			}
		})
	}
}

func selectionInput(task, ctxID string, selector any, toolUseID string) map[string]any {
	in := map[string]any{"schemaVersion": 1, "kind": "cloud_resource_selection", "required": true, "requestTaskId": task,
		"contextId": ctxID, "inputId": "resource-1", "prompt": "Pick a VSwitch"}
	if selector != nil {
		in["selector"] = selector
	}
	if toolUseID != "" {
		in["toolUseId"] = toolUseID
	}
	return in
}

// TestResourceSelectionIdentity: a resource selection whose selector has no
// id, or that has no toolUseId, cannot be answered: A2A_PROTOCOL_ERROR, and
// nothing reaches A2A (protocol.md §5.8). The embedded agent always sends
// both, so a scripted upstream produces the fault.
func TestResourceSelectionIdentity(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		selector  any
		toolUseID string
	}{
		"selector without id": {map[string]any{"kind": "vswitch"}, "toolu_s"},
		"no selector":         {nil, "toolu_s"},
		"no toolUseId":        {map[string]any{"id": "vswitch"}, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, asking(func(task, ctxID string) []map[string]any {
				return []map[string]any{selectionInput(task, ctxID, c.selector, c.toolUseID)}
			}), fixtureOptions{})
			s, err := f.run(t, f.request(t, "thread-s", "run-1", "go", nil))
			if err != nil {
				t.Fatal(err)
			}
			interruptsOf(t, s)
			for i, entry := range [][]agui.ResumeEntry{
				resolved("resource-1", `{"value":"vsw-1"}`),
				{{InterruptID: "resource-1", Status: agui.ResumeCancelled}},
			} {
				s, err = f.run(t, f.request(t, "thread-s", "run-2-"+itoa(i+1), "", entry))
				if err != nil {
					t.Fatal(err)
				}
				if e := runError(t, s); e.Code != "A2A_PROTOCOL_ERROR" || e.Message != "The resource selection request is missing its identity." {
					t.Fatalf("answer %d: %+v", i, e)
				}
			}
			if got := f.up.textsSent("task-1"); len(got) != 0 {
				t.Fatalf("sent %q", got)
			}
		})
	}
}

// TestResourceSelectionLabelLimit: the label sent (the payload's, else the
// value) may have 1024 characters, not 1025 (protocol.md §5.7).
func TestResourceSelectionLabelLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, asking(func(task, ctxID string) []map[string]any {
		return []map[string]any{selectionInput(task, ctxID, map[string]any{"id": "vswitch"}, "toolu_s")}
	}), fixtureOptions{})
	s, err := f.run(t, f.request(t, "thread-l", "run-1", "go", nil))
	if err != nil {
		t.Fatal(err)
	}
	interruptsOf(t, s)
	long := strings.Repeat("é", 1025)
	for i, p := range []string{`{"value":"vsw-1","label":"` + long + `"}`, `{"value":"` + long + `"}`} {
		s, err = f.run(t, f.request(t, "thread-l", "run-2-"+itoa(i+1), "", resolved("resource-1", p)))
		if err != nil {
			t.Fatal(err)
		}
		if e := runError(t, s); e.Code != "RESUME_PAYLOAD_INVALID" || e.Message != "The resource selection label is too long." {
			t.Fatalf("payload %d: %+v", i, e)
		}
	}
	s, err = f.run(t, f.request(t, "thread-l", "run-3", "", resolved("resource-1", `{"value":"`+long[2:]+`"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if fin, ok := s.last(t).(*agui.RunFinished); !ok || fin.Outcome.Type != agui.OutcomeSuccess || len(f.up.textsSent("task-1")) != 1 {
		t.Fatalf("1024 characters: %#v, sent %d", s.last(t), len(f.up.textsSent("task-1")))
	}
}

// TestSeveralTextAnswers: A2A takes one text answer per turn, so a resume
// answering two text inputs sends one message — the answer to the task's
// direct input, else the last, as the original — and records both as
// applied in one commit (protocol.md §5.8, §12.11). Two text inputs pending
// at once come from an iac-code that listed a question beside its input,
// or lost its metadata across a restart, which the embedded agent never
// does.
func TestSeveralTextAnswers(t *testing.T) {
	t.Parallel()
	question := func(task, ctxID, id string) map[string]any {
		return map[string]any{"schemaVersion": 1, "kind": "ask_user_question", "required": true, "requestTaskId": task,
			"contextId": ctxID, "inputId": id, "toolUseId": "toolu-" + id, "prompt": "Which?", "allowFreeText": true}
	}
	answers := []agui.ResumeEntry{
		{InterruptID: "ask-a", Status: agui.ResumeResolved, Payload: json.RawMessage(`{"freeText":"answer A"}`)},
		{InterruptID: "ask-b", Status: agui.ResumeResolved, Payload: json.RawMessage(`{"freeText":"answer B"}`)},
	}
	for _, c := range []struct {
		name, direct string
		forget       bool // GetTask no longer lists the inputs (merged, §5.6 step 5)
		want         string
	}{
		{"the awaited input wins", "ask-a", false, "answer A"},
		{"else the last", "ask-a", true, "answer B"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			up := asking(func(task, ctxID string) []map[string]any {
				return []map[string]any{question(task, ctxID, "ask-a"), question(task, ctxID, "ask-b")}
			})
			f := newFixture(t, up, fixtureOptions{})
			s, err := f.run(t, f.request(t, "thread-t", "run-1", "go", nil))
			if err != nil {
				t.Fatal(err)
			}
			if its := interruptsOf(t, s); len(its) != 2 {
				t.Fatalf("interrupts %+v", its)
			}
			if c.forget {
				get := up.getTask
				up.getTask = func(task string) (*a2a.Event, error) {
					ev, err := get(task)
					if ev != nil {
						ev.Metadata = map[string]any{"iac_code": map[string]any{"iacCodeSessionId": "s-" + ev.ContextID}}
					}
					return ev, err
				}
			}
			s, err = f.run(t, f.request(t, "thread-t", "run-2", "", answers))
			if err != nil {
				t.Fatal(err)
			}
			if fin, ok := s.last(t).(*agui.RunFinished); !ok || fin.Outcome.Type != agui.OutcomeSuccess {
				t.Fatalf("resume ended %#v", s.last(t))
			}
			if got := up.textsSent("task-1"); len(got) != 1 || got[0] != c.want {
				t.Fatalf("sent %q, want [%q]", got, c.want)
			}
			doc := loadDoc(t, f.store, "thread-t")
			for _, id := range []string{"ask-a", "ask-b"} {
				if _, ok := doc.AppliedDigest(doc.Execution.ExecutionID, id); !ok {
					t.Fatalf("%s not applied: %v", id, doc.AppliedResumeDigests)
				}
			}
			if len(doc.Execution.Pending) != 0 {
				t.Fatalf("pending left: %v", doc.Execution.Pending)
			}
			// Repeating the resume applies nothing again.
			s, err = f.run(t, f.request(t, "thread-t", "run-3", "", answers))
			if err != nil {
				t.Fatal(err)
			}
			if e := runError(t, s); e.Code != "RESUME_ALREADY_APPLIED" || len(up.textsSent("task-1")) != 1 {
				t.Fatalf("repeat: %+v", e)
			}
		})
	}
}
