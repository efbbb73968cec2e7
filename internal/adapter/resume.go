package adapter

import (
	"context"
	"errors"
	"sort"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// historyLength is the GetTask history asked for during resume (§11).
const historyLength = 100

// answer is one validated resume entry, ready to apply.
type answer struct {
	entry   agui.ResumeEntry
	pending state.Pending
	digest  string
	index   int // of the entry in the request's resume list
	// superseded are text answers committed with this one but not sent
	// (chooseText).
	superseded []answer
}

// resume runs the resume preparation (protocol.md §5.6), validates the
// answers (§5.7), applies them (§5.8) and follows the continuation.
func (rs *runState) resume(ctx context.Context) error {
	r := rs.r
	entries := r.in.Resume
	digests := make([]string, len(entries))
	for i, e := range entries {
		d, err := answerDigest(e)
		if err != nil {
			return runErr(CodeResumePayloadInvalid, i18n.MsgPayloadInvalid)
		}
		digests[i] = d
	}

	doc := r.a.view(r.t)
	execID := doc.Execution.ExecutionID
	noTask := doc.Execution.TaskID == nil || len(doc.Execution.Pending) == 0
	allApplied := true
	for i, e := range entries {
		if d, ok := doc.AppliedDigest(execID, e.InterruptID); !ok || d != digests[i] {
			allApplied = false
		}
	}
	var taskID, sessionID string
	if doc.Execution.TaskID != nil {
		taskID = *doc.Execution.TaskID
	}
	if doc.IacCodeSessionID != nil {
		sessionID = *doc.IacCodeSessionID
	}
	contextID, cwd := doc.ContextID, doc.CWD

	// Step 1.
	if noTask {
		if allApplied && len(entries) > 0 {
			if taskID != "" && !containsString(doc.TerminalExecutionIDs, execID) {
				return rs.followApplied(ctx, taskID)
			}
			return runErr(CodeResumeAlreadyApplied, i18n.MsgResumeAlreadyApplied)
		}
		return runErr(CodeExecutionLost, i18n.MsgTaskToResumeUnavailable)
	}
	client := r.a.client
	// Step 2: make sure A2A has the iac-code session back.
	if sessionID != "" {
		if _, err := client.EnsureRestored(ctx, cwd, sessionID, taskID); err != nil {
			switch {
			case errors.Is(err, a2a.ErrBackupNotReady):
				return runErr(CodeSessionBackupNotReady, i18n.MsgSessionBackupNotReady)
			case errors.Is(err, a2a.ErrSessionUnavailable):
				return rs.executionLost(ctx, i18n.MsgSessionToResumeUnavailable)
			default:
				return err
			}
		}
	}
	// Step 3: the task must still be the interrupted one.
	task, err := client.GetTask(ctx, taskID, historyLength)
	var rpc *a2a.RPCError
	if errors.As(err, &rpc) && rpc.Code == a2a.CodeTaskNotFound {
		// A2A no longer knows the task (for example after losing its state):
		// there is nothing to resume, and nothing to cancel either.
		return rs.executionLost(ctx, i18n.MsgTaskToResumeUnavailable)
	}
	if err != nil {
		return err
	}
	if task.TaskID != taskID || (task.ContextID != "" && task.ContextID != contextID) {
		return runErr(CodeA2AProtocolError, i18n.MsgTaskIdentityMismatch)
	}
	if _, _, sid := mapper.Identity(task); sid != "" && sessionID == "" {
		if err := rs.bindIdentity(ctx, task); err != nil {
			return err
		}
	}
	// Step 4: the snapshot view and the pipeline catch-up (iac-code's).
	rs.buf = rs.m.MapTaskSnapshot(rs.buf, task)
	var taskInputs []mapper.Input
	if r.a.generic {
		taskInputs = genericTaskInputs(r.a.view(r.t), task)
	} else {
		if err := rs.catchUp(ctx, taskID); err != nil {
			return err
		}
		taskInputs = rs.m.RequiredInputs(task)
	}
	// Step 5: reconcile pending interrupts with what the task still waits for.
	if ae := answerEntries(entries, digests); answeredBeforeCrash(r.a.view(r.t), task, taskInputs, ae) {
		return rs.commitAnsweredBeforeCrash(ctx, task, ae)
	}
	rs.awaited = awaitedTextInput(taskInputs)
	announced, err := rs.reconcile(ctx, task, taskInputs, entries)
	if err != nil {
		return err
	}
	answers, err := rs.checkEntries(ctx, entries, digests, announced)
	if err != nil || answers == nil {
		return err
	}
	rs.lastState = task.State()
	return rs.apply(ctx, answers, taskID, contextID)
}

// catchUp fetches the pipeline state after the persisted cursor and maps it
// (protocol.md §9.2). A 404 means there is no pipeline state.
func (rs *runState) catchUp(ctx context.Context, taskID string) error {
	after := rs.r.a.view(rs.r.t).Execution.PipelineSequence
	if seq := rs.m.PipelineSequence(); seq > after {
		after = seq
	}
	return rs.mapPipelineAfter(ctx, taskID, after)
}

// mapPipelineAfter maps the pipeline state of a task after a sequence:
// the snapshot and the journal events (protocol.md §9.2). A 404 means the
// task has no pipeline state: nothing to map.
func (rs *runState) mapPipelineAfter(ctx context.Context, taskID string, after int64) error {
	st, err := rs.r.a.client.PipelineState(ctx, taskID, after)
	if errors.Is(err, a2a.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	rs.buf = rs.m.MapPipelineState(rs.buf, st)
	return nil
}

// reconcile merges or replaces the durable pending set with the task's
// current inputs (§5.6 step 5) and returns the ids the client has seen.
func (rs *runState) reconcile(ctx context.Context, task *a2a.Event, inputs []mapper.Input, entries []agui.ResumeEntry) (map[string]bool, error) {
	announced := make(map[string]bool)
	for id := range rs.r.a.view(rs.r.t).Execution.Pending {
		announced[id] = true
	}
	known := false
	for _, in := range inputs {
		for _, e := range entries {
			if e.InterruptID == in.ID {
				known = true
			}
		}
	}
	ic := task.IacCode()
	_, hasInput := ic["input"]
	_, hasPerms := ic["pendingPermissions"]
	replace := isTerminalState(task.State()) || (!known && (hasInput || hasPerms))
	var added []mapper.Input // inputs that were not durable before
	for _, in := range inputs {
		if !announced[in.ID] {
			added = append(added, in)
		}
	}
	_, err := rs.r.a.update(ctx, rs.r.t, func(doc *state.Thread) (*state.Thread, error) {
		pending := doc.Execution.Pending
		changed := false
		if replace && len(pending) > 0 {
			clear(pending)
			changed = true
		}
		for _, in := range inputs {
			if _, ok := pending[in.ID]; !ok {
				pending[in.ID] = state.Pending{Value: in.Projection, Sideband: in.Sideband}
				changed = true
			}
		}
		if !changed {
			return nil, errNoChange
		}
		return doc, nil
	})
	if err != nil {
		// A failed reconciliation write fails closed like every
		// recovery-critical write (§9.3): the task is cancelled and the
		// thread does not keep an interrupt nobody can answer.
		return nil, rs.failClosed(ctx, i18n.MsgResumeReconcileCommitFailed)
	}
	if replace {
		for id := range announced {
			announced[id] = false
		}
	}
	rs.r.a.observeInterrupts(ctx, added)
	return announced, nil
}

// checkEntries runs §5.6 steps 6–10 and returns the answers to apply. A nil
// slice with a nil error means the run already ended with an interrupt
// outcome listing newly discovered inputs.
func (rs *runState) checkEntries(ctx context.Context, entries []agui.ResumeEntry, digests []string, announced map[string]bool) ([]answer, error) {
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		if seen[e.InterruptID] {
			return nil, runErr(CodeIncompleteResume, i18n.MsgResumeDuplicateIDs)
		}
		seen[e.InterruptID] = true
	}
	// Step 7: pending ids that were already applied leave the set.
	conflict := false
	doc, err := rs.r.a.update(ctx, rs.r.t, func(doc *state.Thread) (*state.Thread, error) {
		conflict = false
		removed := false
		for id := range doc.Execution.Pending {
			d, ok := doc.AppliedDigest(doc.Execution.ExecutionID, id)
			if !ok {
				continue
			}
			for i, e := range entries {
				if e.InterruptID == id && digests[i] != d {
					conflict = true
				}
			}
			delete(doc.Execution.Pending, id)
			removed = true
		}
		if !removed {
			return nil, errNoChange
		}
		return doc, nil
	})
	if err != nil {
		return nil, rs.failClosed(ctx, i18n.MsgResumeReconcileCommitFailed)
	}
	if conflict {
		return nil, runErr(CodeResumeAlreadyApplied, i18n.MsgResumeAlreadyApplied)
	}
	execID := doc.Execution.ExecutionID
	pending := doc.Execution.Pending
	// Step 8: entries for ids that are not pending.
	var out []answer
	for i, e := range entries {
		p, ok := pending[e.InterruptID]
		if ok {
			out = append(out, answer{entry: e, pending: p, digest: digests[i], index: i})
			continue
		}
		d, applied := doc.AppliedDigest(execID, e.InterruptID)
		switch {
		case applied && d == digests[i]:
		case applied:
			return nil, runErr(CodeResumeAlreadyApplied, i18n.MsgResumeAlreadyApplied)
		default:
			return nil, runErr(CodeUnknownInterrupt, i18n.MsgUnknownInterrupt)
		}
	}
	// Step 9: every announced pending id must be answered; ids the client
	// has never seen end the run with a new interrupt outcome.
	var unseen bool
	for id := range pending {
		if seen[id] {
			continue
		}
		if announced[id] {
			return nil, runErr(CodeIncompleteResume, i18n.MsgResumeIncomplete)
		}
		unseen = true
	}
	if unseen {
		// Inputs the client has never seen: announce them, apply nothing.
		return nil, rs.announceInterrupts(ctx)
	}
	// Step 10.
	for _, a := range out {
		if err := validateAnswer(a); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, runErr(CodeResumeAlreadyApplied, i18n.MsgResumeAlreadyApplied)
	}
	sort.SliceStable(out, func(i, j int) bool { return isPermission(out[i].pending) && !isPermission(out[j].pending) })
	return out, nil
}

func isTerminalState(s string) bool {
	switch s {
	case a2a.StateCompleted, a2a.StateFailed, a2a.StateCanceled, a2a.StateRejected:
		return true
	}
	return false
}
