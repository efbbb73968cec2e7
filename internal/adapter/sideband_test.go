package adapter_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

// envelope is a pipeline envelope as iac-code journals it.
func envelope(seq int) map[string]any {
	return map[string]any{"eventId": fmt.Sprintf("evt-%d", seq), "sequence": float64(seq), "eventType": "stack_progress",
		"pipelineRunId": "pr-1", "data": map[string]any{"progress": float64(seq)}}
}

// sidebandPipeline is a pipeline task with one candidate permission in
// pendingPermissions: the task keeps WORKING while it waits (protocol.md
// §5.1). After the answer the journal holds events 1–8, but the
// subscription shows only event 8, then ends as end says: the envelopes
// 6 and 7 were published between the answer and the subscription.
func sidebandPipeline(end string) *scripted {
	up := &scripted{}
	var mu sync.Mutex
	answered := false
	perm := func(task, ctxID string) map[string]any {
		p := permissionInput(task, ctxID, "cand-perm")
		p["scope"] = "candidate"
		return p
	}
	working := func(task, ctxID string) *a2a.Event {
		mu.Lock()
		defer mu.Unlock()
		iac := map[string]any{}
		if !answered {
			iac["pendingPermissions"] = []any{perm(task, ctxID)}
		}
		return status(task, ctxID, "s-"+ctxID, "TASK_STATE_WORKING", iac)
	}
	up.send = func(p *a2a.SendParams) ([]*a2a.Event, error) {
		return []*a2a.Event{working("task-1", p.ContextID)}, nil
	}
	var ctxID string
	up.getTask = func(task string) (*a2a.Event, error) {
		ev := working(task, ctxID)
		ev.Kind = a2a.KindTask
		return ev, nil
	}
	up.pipeline = func(_ string, after int64) (*a2a.PipelineState, error) {
		mu.Lock()
		defer mu.Unlock()
		last := 5
		if answered {
			last = 8
		}
		st := &a2a.PipelineState{Snapshot: map[string]any{"pipelineRunId": "pr-1", "lastSequence": float64(last)}}
		for i := int(after) + 1; i <= last; i++ {
			st.Events = append(st.Events, envelope(i))
		}
		return st, nil
	}
	up.subscribe = func(task string) ([]*a2a.Event, error) {
		live := status(task, ctxID, "s-"+ctxID, "TASK_STATE_WORKING", map[string]any{"pipeline": envelope(8)})
		if end == "" {
			return []*a2a.Event{live}, nil
		}
		return []*a2a.Event{live, status(task, ctxID, "s-"+ctxID, end, nil)}, nil
	}
	up.onSendMessage = func() {
		mu.Lock()
		answered = true
		mu.Unlock()
	}
	up.onContext = func(c string) { ctxID = c }
	return up
}

// progressSeqs lists the sequences of the stack_progress CUSTOM events.
func progressSeqs(s *sink) []int {
	var out []int
	for _, ev := range s.evs {
		if c, ok := ev.(*agui.Custom); ok && c.Name == "iac-code.pipeline.v1" {
			env, _ := c.Value.(map[string]any)
			n, _ := a2a.Int(env["sequence"])
			out = append(out, int(n))
		}
	}
	return out
}

// TestSidebandCatchUpAndEnd: after sideband answers the pipeline catch-up
// runs again from the cursor the continuation started at, at the end of
// the run, so envelopes no stream carried are shown (protocol.md §5.8). A
// continuation that ends while the pipeline works ends
// A2A_EXECUTION_FAILED and cancels nothing (§4.4 step 7, not §5.12). A
// scripted upstream: the embedded agent publishes nothing between the
// answer and the subscription on demand.
func TestSidebandCatchUpAndEnd(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		end, want, follow string
	}{
		// Ended early: GetTask repairs the view and still sees WORKING.
		{"", "A2A_EXECUTION_FAILED", " GetTask SubscribeToTask GetTask"},
		{"TASK_STATE_COMPLETED", "success", " GetTask SubscribeToTask"},
	} {
		t.Run(c.want, func(t *testing.T) {
			t.Parallel()
			up := sidebandPipeline(c.end)
			f := newFixture(t, up, fixtureOptions{})
			s, err := f.run(t, f.request(t, "thread-sb", "run-1", "go", nil))
			if err != nil {
				t.Fatal(err)
			}
			if its := interruptsOf(t, s); len(its) != 1 || its[0].ID != "cand-perm" {
				t.Fatalf("interrupts %+v", its)
			}
			s, err = f.run(t, f.request(t, "thread-sb", "run-2", "", allow("cand-perm")))
			if err != nil {
				t.Fatal(err)
			}
			switch fin := s.last(t).(type) {
			case *agui.RunError:
				if fin.Code != c.want || fin.Message != "The A2A execution failed." {
					t.Fatalf("ended %+v", fin)
				}
			case *agui.RunFinished:
				if c.want != "success" || fin.Outcome.Type != agui.OutcomeSuccess {
					t.Fatalf("ended %+v", fin)
				}
			}
			// Preparation shows 1–5; the subscription 8; the catch-up 6 and 7.
			if got := fmt.Sprint(progressSeqs(s)); got != "[1 2 3 4 5 8 6 7]" {
				t.Fatalf("pipeline events %s", got)
			}
			var calls []string
			up.mu.Lock()
			for _, cl := range up.calls {
				calls = append(calls, cl.Method+strings.Join(cl.Parts, ""))
			}
			up.mu.Unlock()
			got := strings.Join(calls, " ")
			if !strings.HasSuffix(got, "PipelineStateafter=0 SendMessage"+`{"decision":"allow_once","inputId":"cand-perm","kind":"permission","requestTaskId":"task-1","schemaVersion":1,"toolUseId":"toolu-cand-perm"}`+c.follow+" PipelineStateafter=5") {
				t.Fatalf("A2A calls %s", got)
			}
			if strings.Contains(got, "CancelTask") {
				t.Fatal("a sideband continuation cancelled the pipeline")
			}
		})
	}
}
