package adapter

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Texts of the subscribe route's refusals (protocol.md §7.2), answered as
// {"error": <text>} like the original's.
const (
	ObserveInvalidIdentity = "Invalid observation identity"
	observeNoCheckpoint    = "Execution checkpoint unavailable"
	observeIdentityChanged = "Execution observation identity changed"
	observeStateFailed     = "AG-UI adapter state unavailable"
)

// CodeExecutionFailed is the RUN_ERROR code of an observed execution that
// failed (§7.2); runs use A2A_EXECUTION_FAILED.
const CodeExecutionFailed = "EXECUTION_FAILED"

// ObserveError is a refused observation: an HTTP status and the route's
// error text.
type ObserveError struct {
	Status int
	Text   string
}

func (e *ObserveError) Error() string { return e.Text }

// ObserveRequest names the execution to observe and a run that opened it.
type ObserveRequest struct {
	ExecutionID, ThreadID, RunID, RosInvocationID string
}

// Observation is an admitted read-only view of an execution (protocol.md
// §7.2): it never owns the thread's active run, never cancels and never
// writes state.
type Observation struct {
	a      *Adapter
	t      *thread
	req    ObserveRequest
	taskID string
	doc    *state.Thread
}

// Observe checks an observation request against the thread (§7.2).
func (a *Adapter) Observe(ctx context.Context, req ObserveRequest) (*Observation, error) {
	if req.ThreadID == "" || req.RunID == "" || req.RosInvocationID == "" {
		return nil, &ObserveError{http.StatusBadRequest, ObserveInvalidIdentity}
	}
	t, err := a.acquire(ctx, req.ThreadID)
	if err != nil {
		return nil, &ObserveError{http.StatusServiceUnavailable, observeStateFailed}
	}
	doc := a.view(t)
	if doc == nil || doc.Execution.TaskID == nil || *doc.Execution.TaskID == "" {
		a.unpin(req.ThreadID, t)
		return nil, &ObserveError{http.StatusNotFound, observeNoCheckpoint}
	}
	_, knownRun := doc.RunDigests[req.RunID]
	if doc.Execution.ExecutionID != req.ExecutionID || doc.Execution.RosInvocationID != req.RosInvocationID || !knownRun {
		a.unpin(req.ThreadID, t)
		return nil, &ObserveError{http.StatusConflict, observeIdentityChanged}
	}
	return &Observation{a: a, t: t, req: req, taskID: *doc.Execution.TaskID, doc: doc}, nil
}

// Stream writes the observed execution: RUN_STARTED, the session event,
// the mapped GetTask and SubscribeToTask events, and exactly one terminal
// event (AG-UI 1.0: nothing follows RUN_ERROR). A gone client just ends it.
func (o *Observation) Stream(ctx context.Context, sink Sink, lang i18n.Lang) {
	defer o.a.unpin(o.req.ThreadID, o.t)
	doc := o.doc
	answered := make(map[string]bool)
	for _, d := range doc.AppliedResumeDigests {
		if d.ExecutionID == doc.Execution.ExecutionID {
			answered[d.InterruptID] = true
		}
	}
	// Seeded like the original's observer: the thread's text digests, so
	// that text the thread already has is not sent again (§4.7), and its
	// open pipeline steps, so that their completions stay balanced. Not
	// the pipeline cursor and no reopened steps: the original seeds
	// neither (docs/decisions.md, "Observer mapper seed").
	m := mapper.New(mapper.Config{
		ThreadID:         o.req.ThreadID,
		RunID:            o.req.RunID,
		DurableOpenSteps: slices.Clone(doc.Execution.PipelineOpenSteps),
		TextDigests:      slices.Clone(doc.Execution.TextSnapshotDigests),
		Answered:         func(id string) bool { return answered[id] },
		Generic:          o.a.generic,
	})
	buf := []agui.Event{
		&agui.RunStarted{ThreadID: o.req.ThreadID, RunID: o.req.RunID},
		&agui.Custom{Name: "iac-code.session.v1", Value: map[string]any{
			"schemaVersion": 1, "threadId": doc.ThreadID, "aguiRunId": o.req.RunID,
			"executionId": doc.Execution.ExecutionID, "contextId": doc.ContextID, "taskId": o.taskID,
			"rosInvocationId": doc.Execution.RosInvocationID, "sessionId": optional(doc.IacCodeSessionID),
		}},
	}
	flush := func() bool {
		if len(buf) == 0 {
			return true
		}
		err := sink.WriteBatch(buf)
		buf = buf[:0]
		return err == nil
	}
	if !flush() {
		return
	}
	// step maps one event and writes what it mapped; it returns the
	// terminal event once the execution stopped (pending inputs, a
	// terminal state, input-required), or errObserverGone. A snapshot
	// that is followed by another (first, below) leaves its text to that
	// one.
	step := func(ev *a2a.Event, first bool) (agui.Event, error) {
		inputs := m.RequiredInputs(ev)
		st := ev.State()
		stops := len(inputs) > 0 || isTerminalState(st) || st == a2a.StateInputRequired
		if first && !stops {
			buf = m.MapWithoutText(buf, ev)
		} else {
			buf = m.Map(buf, ev)
		}
		if !stops {
			if !flush() {
				return nil, errObserverGone
			}
			return nil, nil
		}
		buf = m.CloseAll(buf)
		switch {
		case st == a2a.StateFailed || st == a2a.StateRejected || st == a2a.StateAuthRequired:
			return &agui.RunError{Code: CodeExecutionFailed, Message: i18n.T(lang, i18n.MsgObservedExecutionFailed)}, nil
		case len(inputs) > 0:
			return &agui.RunFinished{ThreadID: o.req.ThreadID, RunID: o.req.RunID,
				Outcome: agui.Outcome{Type: agui.OutcomeInterrupt, Interrupts: o.interrupts(inputs)}, Usage: m.Usage()}, nil
		}
		return &agui.RunFinished{ThreadID: o.req.ThreadID, RunID: o.req.RunID, Outcome: agui.Outcome{Type: agui.OutcomeSuccess}, Usage: m.Usage()}, nil
	}
	end, err := o.follow(ctx, step)
	if err != nil || ctx.Err() != nil {
		return // the observer left; nothing else happens
	}
	if end == nil {
		buf = m.CloseAll(buf)
		end = &agui.RunError{Code: CodeA2AUnavailable, Message: i18n.T(lang, i18n.MsgA2AUnavailable)}
	}
	buf = append(buf, end)
	flush()
}

var errObserverGone = errors.New("observer disconnected")

// follow reads GetTask, then SubscribeToTask, then GetTask once more when
// the subscription ends early. A nil event means the execution could not
// be seen to stop.
//
// A task that goes on is mapped from GetTask without its text: the
// subscription's first frame is the task again, and its text is a
// snapshot too. Mapped twice, a text the thread already has would be
// stripped the first time and sent the second (the replayed-prefix check
// runs once per message, protocol.md §4.7). Should the subscription fail,
// the last GetTask carries the text.
func (o *Observation) follow(ctx context.Context, step func(*a2a.Event, bool) (agui.Event, error)) (agui.Event, error) {
	client := o.a.client
	task, err := client.GetTask(ctx, o.taskID, historyLength)
	if err != nil {
		return nil, nil
	}
	if end, err := step(task, true); end != nil || err != nil {
		return end, err
	}
	if s, err := client.SubscribeToTask(ctx, o.taskID); err == nil {
		defer s.Close()
		for {
			ev, err := s.Next()
			if err != nil {
				break // io.EOF or a broken stream: GetTask decides below
			}
			if ev.TaskID != "" && ev.TaskID != o.taskID {
				continue // not the observed task; an observer fails nothing
			}
			if end, err := step(ev, false); end != nil || err != nil {
				return end, err
			}
		}
	}
	if ctx.Err() != nil {
		return nil, errObserverGone
	}
	if task, err = client.GetTask(ctx, o.taskID, historyLength); err == nil {
		return step(task, false)
	}
	return nil, nil
}

// interrupts lists the durable pending interrupts, else the task's inputs.
func (o *Observation) interrupts(inputs []mapper.Input) []agui.Interrupt {
	if doc := o.a.view(o.t); doc != nil && len(doc.Execution.Pending) > 0 && doc.Execution.ExecutionID == o.req.ExecutionID {
		return pendingInterrupts(doc)
	}
	out := make([]agui.Interrupt, 0, len(inputs))
	for _, in := range inputs {
		out = append(out, mapper.BuildInterrupt(in.Projection))
	}
	return out
}
