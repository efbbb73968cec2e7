package adapter

import (
	"context"
	"errors"

	"github.com/iac-code-agui/iac-code-agui/internal/fence"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// The session-handoff writer fence (protocol.md §8.9). When it is on
// (Options.Fence), every admission names its physical owner in
// executionFence.owner, every save runs under the thread's fence lock at
// the epoch the thread was loaded under, and a thread whose epoch moved
// (it was handed to or from another sandbox) is read again, unless a run
// of this process still streams on it.

// errEpochMoved: the thread's fence epoch changed under a run this process
// still has; its state belongs to the new owner (503 STATE_UNAVAILABLE).
var errEpochMoved = errors.New("prior AG-UI producer has not drained")

// fenceAdmit binds the admission's owner to the thread's fence; a refusal
// is the 400 of §2.5 step 9.
func (a *Adapter) fenceAdmit(threadID string, ic *request.IacCode) error {
	if !a.fence.Enabled() {
		return nil
	}
	d := &Details{Field: "/forwardedProps/iacCode/executionFence/owner"}
	owner, err := fence.CanonicalOwner(ic.ExecutionFence["owner"])
	if err != nil {
		d.Reason = "must be a physical execution identity while the writer fence is on"
		return errInvalidForwarded.with(d)
	}
	if err := a.fence.Admit(fence.ThreadKey(threadID), owner); err != nil {
		switch {
		case errors.Is(err, fence.ErrFrozen):
			d.Reason = "the thread is being handed over"
		case errors.Is(err, fence.ErrOwner):
			d.Reason = "is not the thread's physical owner"
		default:
			a.log.Warn("AG-UI writer fence unavailable", "threadId", threadID, "error", err)
			d.Reason = "the writer fence is unavailable"
		}
		return errInvalidForwarded.with(d)
	}
	return nil
}

// fenceEpoch checks the thread's fence epoch before it is used; the
// caller holds t.mu. A moved epoch drops the loaded document so that it
// is read again, or fails while a run of this process is active on it.
func (a *Adapter) fenceEpoch(t *thread, threadID string) error {
	if !a.fence.Enabled() {
		return nil
	}
	e, err := a.fence.Epoch(fence.ThreadKey(threadID))
	if err != nil {
		return err
	}
	if t.loaded && t.epoch != e {
		if t.activeRun != "" {
			return errEpochMoved
		}
		t.loaded = false
	}
	t.epoch = e
	return nil
}

// saveFenced writes one document conditionally (save), inside the writer
// fence when it is on.
func (a *Adapter) saveFenced(ctx context.Context, t *thread, doc *state.Thread, prev state.Revision) (state.Revision, error) {
	if !a.fence.Enabled() {
		return a.save(ctx, doc, prev)
	}
	var rev state.Revision
	err := a.fence.Write(fence.ThreadKey(doc.ThreadID), t.epoch, func() error {
		var err error
		rev, err = a.save(ctx, doc, prev)
		return err
	})
	return rev, err
}
