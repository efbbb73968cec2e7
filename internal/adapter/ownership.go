package adapter

import "context"

// Busy reports whether this process must keep serving a thread: a run of
// it is active here, or interrupts wait for answers (they live in this
// replica's A2A server). A thread that cannot be read counts as busy, so
// that a replica never gives up a thread it cannot judge.
func (a *Adapter) Busy(ctx context.Context, threadID string) bool {
	a.mu.Lock()
	t, ok := a.threads[threadID]
	a.mu.Unlock()
	if ok {
		t.mu.Lock()
		loaded, busy := t.loaded, t.activeRun != "" || (t.doc != nil && len(t.doc.Execution.Pending) > 0)
		t.mu.Unlock()
		if loaded {
			return busy
		}
	}
	doc, _, err := a.store.Load(ctx, threadID)
	if err != nil {
		return !isNotFound(err)
	}
	return len(doc.Execution.Pending) > 0
}

// Invalidate drops what this process cached of a thread, unless an
// operation holds it: another replica may have changed it while it owned
// the thread. The next use reads the store.
func (a *Adapter) Invalidate(threadID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t, ok := a.threads[threadID]; ok && t.pins == 0 {
		delete(a.threads, threadID)
	}
}
