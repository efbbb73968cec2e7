package adapter

import (
	"context"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// The generic A2A profile (Options.Generic, docs/upstream.md §10) drives any
// A2A 1.0 agent through the protocol's own messages and task states, with
// the admission, interrupt, exactly-once and fail-closed rules of the
// iac-code profile and the same thread document. What differs is here and
// in the mapper (mapper.Config.Generic): no request metadata, no iac-code
// side routes, one text-answer interrupt per waiting task.

// genericCWD is the cwd a generic thread's document records: the generic
// profile has no workspace, and the document needs a cwd (schemaVersion 1).
// It is not an absolute path, so no iac-code request can ever bind to it,
// and a thread of one profile met by a gateway of the other is a binding
// conflict instead of being driven with the wrong rules (docs/decisions.md).
const genericCWD = "a2a:generic"

// genericRosInvocationID is the rosInvocationId of a generic request
// without forwardedProps.iacCode: the document needs one, resume compares
// it, and the cancel route names it. A client that wants invocations of
// its own sends iacCode.rosInvocationId.
const genericRosInvocationID = "a2a-generic"

// metadata is the message.metadata.iac_code of the run's messages; the
// generic profile sends none.
func (r *Run) metadata() map[string]any {
	if r.a.generic {
		return nil
	}
	return request.Metadata(r.ic, r.cwd, string(r.lang))
}

// parts are the A2A parts of the user's message: a generic agent gets
// images as A2A 1.0 file parts (request.FileParts).
func (r *Run) parts(p []*a2asdk.Part) []*a2asdk.Part {
	if r.a.generic {
		return request.FileParts(p)
	}
	return p
}

// resumeSignedIn answers a generic AUTH_REQUIRED interrupt: the user
// signed in out of band, as A2A 1.0 has it, so nothing is sent (both SDKs
// refuse a message to such a task: its execution goes on, waiting for the
// credential). The answer is committed and the task followed; its first
// event, the task still waiting, is state (upstream.md §10.4).
func (rs *runState) resumeSignedIn(ctx context.Context, a answer, taskID string) error {
	if err := rs.commitAnswer(ctx, a, ""); err != nil {
		return err
	}
	rs.lastState, rs.parked = "", true
	return rs.follow(ctx, taskID)
}

// waiting reports whether a task state waits for the user.
func waiting(s string) bool { return s == a2a.StateInputRequired || s == a2a.StateAuthRequired }

// parkedTask reports whether ev is the Task object a generic agent (the
// JavaScript SDK) opens the stream of an answer with: still in the waiting
// state, with the earlier history. It is state, not output, and not a new
// question.
func parkedTask(ev *a2a.Event) bool {
	return ev.Kind == a2a.KindTask && waiting(ev.State())
}

// noteGeneric records what a generic event means for the end of the run:
// an agent's direct Message ends the turn successfully, and the message
// of a failed or rejected task is the run's error message.
func (rs *runState) noteGeneric(ev *a2a.Event) {
	switch {
	case ev.Kind == a2a.KindMessage:
		rs.lastState = a2a.StateCompleted
	case ev.Status != nil && (ev.State() == a2a.StateFailed || ev.State() == a2a.StateRejected):
		if text := ev.Status.Message.Text(); text != "" {
			rs.agentError = text
		}
	}
}

// genericTaskInputs are the inputs a generic task still waits for at a
// resume: the durable pending interrupts while the task waits, none once
// it moved on (an answer accepted before a crash, settled.go). A waiting
// task's question is the pending one: asking the mapper would mint a new
// interrupt id for it.
func genericTaskInputs(doc *state.Thread, task *a2a.Event) []mapper.Input {
	if !waiting(task.State()) {
		return nil
	}
	out := make([]mapper.Input, 0, len(doc.Execution.Pending))
	for id, p := range doc.Execution.Pending {
		out = append(out, mapper.Input{ID: id, Projection: p.Value, Sideband: p.Sideband})
	}
	return out
}
