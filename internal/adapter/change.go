package adapter

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// errNoChange, returned by a change, ends update without a write.
var errNoChange = errors.New("adapter: no change")

// maxConflicts bounds how often update reloads after a conflicting write
// before it gives up with the store's error.
const maxConflicts = 3

// change computes a thread's next document from a private copy of the
// current one (nil for a thread never admitted) and returns it, or an
// error: errNoChange to write nothing, anything else to refuse.
type change func(doc *state.Thread) (*state.Thread, error)

// update is the one way a thread document changes (admission, identities,
// interrupts, reconciliation, answers, cancellation, terminal marks). Under
// the thread's lock it applies fn to a copy, saves the copy on the revision
// the current document was loaded at, and installs it in memory only once
// the save succeeded: memory and store never diverge. When the store holds
// another revision (somebody else wrote), it reloads and applies fn again
// to what is stored now, so no update is lost.
//
// It returns the installed document, or fn's error, or the store's error
// (the document in memory is then unchanged).
func (a *Adapter) update(ctx context.Context, t *thread, fn change) (*state.Thread, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return a.updateLocked(ctx, t, fn)
}

// updateLocked is update for a caller that holds t.mu.
func (a *Adapter) updateLocked(ctx context.Context, t *thread, fn change) (*state.Thread, error) {
	for conflicts := 0; ; conflicts++ {
		next, err := fn(t.doc.Clone())
		if errors.Is(err, errNoChange) {
			return t.doc, nil
		}
		if err != nil {
			return t.doc, err
		}
		rev, err := a.saveFenced(ctx, t, next, t.rev)
		if err == nil {
			t.doc, t.rev = next, rev
			return next, nil
		}
		if !errors.Is(err, state.ErrConflict) || conflicts == maxConflicts {
			return t.doc, err
		}
		a.reqLog(ctx).Warn("AG-UI thread changed in the store; reloading", "threadId", next.ThreadID)
		traceConflict(ctx, conflicts+1)
		t.loaded = false
		if err := a.loadLocked(ctx, t, next.ThreadID); err != nil {
			return t.doc, err
		}
	}
}

// save writes one document conditionally and reports the write.
func (a *Adapter) save(ctx context.Context, doc *state.Thread, prev state.Revision) (state.Revision, error) {
	start := time.Now()
	rev, err := a.store.Save(context.WithoutCancel(ctx), doc, prev)
	a.obs.StateWrite(err, time.Since(start))
	return rev, err
}

// updateBestEffort applies an update whose failure is only logged to lg,
// the run's logger (protocol.md §11): the writes the original does not
// fail on (protocol.md §8.8). They are as durable as every other save.
func (a *Adapter) updateBestEffort(ctx context.Context, t *thread, lg *slog.Logger, fn change) {
	if _, err := a.update(ctx, t, fn); err != nil {
		lg.Warn("Failed to persist AG-UI thread state", "error", err)
	}
}
