package adapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
)

// TestCompatResumeReusesRunID: under --compat copilotkit a resume may carry
// the id of the run that raised exactly the pending interrupts; it is
// recorded under its own key, so every replay is still a replay, and the
// relaxation does not survive a restart (the marker is in memory).
func TestCompatResumeReusesRunID(t *testing.T) {
	t.Parallel()
	up := pausing()
	f := newFixture(t, up, fixtureOptions{copilotKit: true})
	s, err := f.run(t, f.request(t, "thread-c", "run-1", "go", nil))
	if err != nil {
		t.Fatal(err)
	}
	id := interruptsOf(t, s)[0].ID
	resume := f.request(t, "thread-c", "run-1", "", allow(id))
	s, err = f.run(t, resume)
	if err != nil {
		t.Fatalf("compat resume refused: %v", err)
	}
	if fin, ok := s.last(t).(*agui.RunFinished); !ok || fin.RunID != "run-1" || fin.Outcome.Type == agui.OutcomeInterrupt {
		t.Fatalf("compat resume ended with %#v", s.last(t))
	}
	doc := loadDoc(t, f.store, "thread-c")
	if len(doc.RunDigests) != 2 || doc.RunDigests["run-1"] == "" {
		t.Fatalf("runDigests %v: want run-1 and the resume's own key", doc.RunDigests)
	}
	for name, req := range map[string]adapter.Request{
		"resume replay":    resume,
		"first run replay": f.request(t, "thread-c", "run-1", "go", nil),
	} {
		if _, err := f.a.Admit(context.Background(), req); codeOf(err) != adapter.CodeDuplicateRunID {
			t.Errorf("%s: got %v, want DUPLICATE_RUN_ID", name, err)
		}
	}
	if n := up.count("SendStreamingMessage"); n != 2 {
		t.Fatalf("A2A saw %d sends, want 2 (the turn and one answer)", n)
	}

	// A restart forgets which run raised the interrupts: the reused id is
	// the protocol's RUN_ID_CONFLICT again, and a new id still works.
	s, err = f.run(t, f.request(t, "thread-c", "run-2", "again", nil))
	if err != nil {
		t.Fatal(err)
	}
	id = interruptsOf(t, s)[0].ID
	restarted := adapter.New(adapter.Options{Store: f.store, Upstream: up, AllowedRoots: request.AllowedRoots([]string{f.root}), CopilotKitCompat: true})
	if _, err := restarted.Admit(context.Background(), f.request(t, "thread-c", "run-2", "", allow(id))); codeOf(err) != adapter.CodeRunIDConflict {
		t.Fatalf("after a restart: got %v, want RUN_ID_CONFLICT", err)
	}
}

// TestCompatOff: without the mode the reused id is a conflict.
func TestCompatOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, pausing(), fixtureOptions{})
	s, err := f.run(t, f.request(t, "thread-o", "run-1", "go", nil))
	if err != nil {
		t.Fatal(err)
	}
	id := interruptsOf(t, s)[0].ID
	if _, err := f.a.Admit(context.Background(), f.request(t, "thread-o", "run-1", "", allow(id))); codeOf(err) != adapter.CodeRunIDConflict {
		t.Fatalf("got %v, want RUN_ID_CONFLICT", err)
	}
}

// TestRefusalDetails: RESUME_REQUIRED lists the pending interrupts; client
// tools get their own message and the /tools pointer, or are ignored
// under --compat copilotkit.
func TestRefusalDetails(t *testing.T) {
	t.Parallel()
	f := newFixture(t, pausing(), fixtureOptions{})
	s, err := f.run(t, f.request(t, "thread-d", "run-1", "go", nil))
	if err != nil {
		t.Fatal(err)
	}
	want := interruptsOf(t, s)
	_, err = f.a.Admit(context.Background(), f.request(t, "thread-d", "run-2", "next", nil))
	var e *adapter.Error
	if !errors.As(err, &e) || e.Code != adapter.CodeResumeRequired || e.Details == nil {
		t.Fatalf("got %v, want RESUME_REQUIRED with details", err)
	}
	got, _ := json.Marshal(e.Details.Pending)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Fatalf("pending %s; want the announced %s", got, exp)
	}

	withTools := func(f *fixture, thread string) adapter.Request {
		req := f.request(t, thread, "run-1", "hello", nil)
		req.Input.Tools = []json.RawMessage{json.RawMessage(`{"name":"showToast","description":"d","parameters":{}}`)}
		return req
	}
	_, err = f.a.Admit(context.Background(), withTools(f, "thread-t"))
	if !errors.As(err, &e) || e.Code != adapter.CodeInvalidInput || e.Status != 400 ||
		e.Msg != "Client-provided tools are not supported." || e.Details == nil || e.Details.Field != "/tools" {
		t.Fatalf("tools: got %#v", err)
	}
	ck := newFixture(t, &scripted{}, fixtureOptions{copilotKit: true})
	if s, err := ck.run(t, withTools(ck, "thread-t")); err != nil {
		t.Fatalf("compat with tools: %v", err)
	} else if _, ok := s.last(t).(*agui.RunFinished); !ok {
		t.Fatalf("compat with tools ended with %#v", s.last(t))
	}
}
