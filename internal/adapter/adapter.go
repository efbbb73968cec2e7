package adapter

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Options configures an Adapter.
type Options struct {
	Store  state.Store
	Client *a2a.Client
	// AllowedRoots are the resolved workspace roots (request.AllowedRoots).
	AllowedRoots []string
	Logger       *slog.Logger
	// Now is the clock used for activity tracking; time.Now when nil.
	Now func() time.Time
}

// Adapter admits runs, drives their A2A executions and keeps the per-thread
// mapping. It is safe for concurrent use.
type Adapter struct {
	store  state.Store
	client *a2a.Client
	roots  []string
	log    *slog.Logger
	now    func() time.Time

	mu      sync.Mutex // guards threads and lastActivity
	threads map[string]*thread
	// lastActivity is the time of the last admission or release (idle
	// shutdown, adapter.md §2.10).
	lastActivity time.Time
}

// thread is the in-memory entry of one loaded thread. Its mutex guards the
// document and the active run; it is held across a save so that two writers
// of the same thread are serialised while different threads proceed in
// parallel.
type thread struct {
	mu        sync.Mutex
	loaded    bool          // the store was read (doc stays nil for a new thread)
	doc       *state.Thread // nil until the thread's first admission
	activeRun string        // in memory only: a restart clears it (adapter.md §6)
}

// New returns an Adapter.
func New(o Options) *Adapter {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Adapter{
		store:        o.Store,
		client:       o.Client,
		roots:        o.AllowedRoots,
		log:          o.Logger,
		now:          o.Now,
		threads:      make(map[string]*thread),
		lastActivity: o.Now(),
	}
}

// entry returns the cached entry of a thread, loading it on first use.
// Nothing is scanned at start: only the requested thread is read
// (adapter.md §8.7). A missing thread yields an entry with a nil doc.
func (a *Adapter) entry(ctx context.Context, threadID string) (*thread, error) {
	a.mu.Lock()
	t, ok := a.threads[threadID]
	if !ok {
		t = &thread{}
		a.threads[threadID] = t
	}
	a.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.loaded {
		return t, nil
	}
	doc, err := a.store.Load(ctx, threadID)
	switch {
	case err == nil:
		t.doc, t.loaded = doc, true
	case isNotFound(err):
		t.loaded = true
	default:
		// Do not cache a failure: a repaired file must become usable.
		a.mu.Lock()
		if a.threads[threadID] == t {
			delete(a.threads, threadID)
		}
		a.mu.Unlock()
		return nil, err
	}
	return t, nil
}

// touch records activity for the idle monitor.
func (a *Adapter) touch() {
	a.mu.Lock()
	a.lastActivity = a.now()
	a.mu.Unlock()
}

// Idle reports whether no loaded thread has an active run or pending
// interrupts, and how long ago the last activity was (adapter.md §2.10).
func (a *Adapter) Idle() (bool, time.Duration) {
	a.mu.Lock()
	threads := make([]*thread, 0, len(a.threads))
	for _, t := range a.threads {
		threads = append(threads, t)
	}
	since := a.now().Sub(a.lastActivity)
	a.mu.Unlock()
	for _, t := range threads {
		t.mu.Lock()
		busy := t.activeRun != "" || (t.doc != nil && len(t.doc.Execution.Pending) > 0)
		t.mu.Unlock()
		if busy {
			return false, since
		}
	}
	return true, since
}

// save persists the thread document; the caller holds t.mu.
func (a *Adapter) save(ctx context.Context, t *thread) error {
	return a.store.Save(context.WithoutCancel(ctx), t.doc)
}

// saveBestEffort persists and only logs a failure (adapter.md §11).
func (a *Adapter) saveBestEffort(ctx context.Context, t *thread) {
	if err := a.save(ctx, t); err != nil {
		a.log.Warn("Failed to persist AG-UI thread state", "threadId", t.doc.ThreadID, "error", err)
	}
}
