package adapter

import (
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// idleCloser is implemented by an upstream whose client keeps idle
// connections and free buffers (the A2A client).
type idleCloser interface {
	CloseIdleConnections()
}

// ReleaseMemory is called by the server once a burst of streams is over.
// It closes the upstream connections the burst left idle (each holds two
// goroutines and its buffers until the pool's idle timeout), and moves the
// idle cached threads to fresh memory: their documents were allocated
// between the burst's short-lived objects and would each keep a mostly
// empty heap page alive (docs/benchmarks.md, open streams). Threads in use
// are left alone; an installed document is immutable, so swapping it for
// an equal copy is invisible to readers (see thread).
func (a *Adapter) ReleaseMemory() {
	if c, ok := a.client.(idleCloser); ok {
		c.CloseIdleConnections()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	threads := make(map[string]*thread, len(a.threads))
	for id, t := range a.threads {
		if t.pins == 0 {
			// Nobody holds t: acquire pins under a.mu, which we hold.
			t = &thread{loaded: t.loaded, doc: t.doc.Compacted(), rev: state.Revision(strings.Clone(string(t.rev))),
				activeRun: t.activeRun, interruptRun: t.interruptRun}
		}
		threads[id] = t
	}
	a.threads = threads
}
