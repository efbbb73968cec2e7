package adapter

import (
	"context"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// A process killed after A2A accepted an answer but before the write that
// records it (protocol.md §5.9 steps 3–4) leaves the interrupt pending in
// the thread document while the task has moved on. Sending the answer
// again would reach A2A twice, so a resume whose every entry names such an
// interrupt commits the entries as applied and follows the task instead
// (§5.6 step 5, docs/decisions.md).

// answeredBeforeCrash reports whether every entry names a durable pending
// interrupt that the task no longer waits for: none of the task's inputs
// is an entry, and the task is terminal, or (for an interrupt of the task
// itself) not INPUT_REQUIRED, or (for a sideband permission, whose task
// stays WORKING while it waits) lists its pending permissions explicitly.
func answeredBeforeCrash(doc *state.Thread, task *a2a.Event, inputs []mapper.Input, entries []answerEntry) bool {
	if len(entries) == 0 {
		return false
	}
	_, listsPerms := task.IacCode()["pendingPermissions"]
	for _, e := range entries {
		p, ok := doc.Execution.Pending[e.id]
		if !ok {
			return false
		}
		switch {
		case isTerminalState(task.State()):
		case p.Sideband && !listsPerms:
			return false
		case !p.Sideband && task.State() == a2a.StateInputRequired:
			return false
		}
		for _, in := range inputs {
			if in.ID == e.id {
				return false
			}
		}
	}
	return true
}

// answerEntry is a resume entry's id and digest.
type answerEntry struct{ id, digest string }

// commitAnsweredBeforeCrash records the entries as applied, removes them
// from the pending set in one write (failing closed like §5.9 step 4) and
// follows the task.
func (rs *runState) commitAnsweredBeforeCrash(ctx context.Context, task *a2a.Event, entries []answerEntry) error {
	_, err := rs.r.a.update(ctx, rs.r.t, func(doc *state.Thread) (*state.Thread, error) {
		for _, e := range entries {
			doc.AddApplied(doc.Execution.ExecutionID, e.id, e.digest)
			delete(doc.Execution.Pending, e.id)
		}
		return doc, nil
	})
	if err != nil {
		return rs.failClosed(ctx, i18n.MsgAcceptedResponseCommitFailed)
	}
	for _, e := range entries {
		rs.answered[e.id] = true
	}
	rs.r.log.Info("Interrupt answered before a restart: not sent again", "interrupts", len(entries))
	rs.sessionEvent()
	rs.lastState = task.State()
	return rs.follow(ctx, task.TaskID)
}

func answerEntries(entries []agui.ResumeEntry, digests []string) []answerEntry {
	out := make([]answerEntry, len(entries))
	for i, e := range entries {
		out[i] = answerEntry{id: e.InterruptID, digest: digests[i]}
	}
	return out
}

// followApplied answers a resume whose answers were all committed by a run
// that a crash stopped before it followed the task (the execution has its
// task and is not terminal; a run that ends always marks it terminal or
// keeps pending interrupts): the task is followed instead of answering
// RESUME_ALREADY_APPLIED and leaving it working upstream. A task A2A no
// longer has is RESUME_ALREADY_APPLIED, as before.
func (rs *runState) followApplied(ctx context.Context, taskID string) error {
	task, err := rs.r.a.client.GetTask(ctx, taskID, historyLength)
	if err != nil {
		return runErr(CodeResumeAlreadyApplied, i18n.MsgResumeAlreadyApplied)
	}
	rs.r.log.Info("Answers applied before a restart: following the task")
	rs.sessionEvent()
	rs.buf = rs.m.MapTaskSnapshot(rs.buf, task)
	rs.lastState = task.State()
	return rs.follow(ctx, taskID)
}
