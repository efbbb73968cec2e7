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
	// MaxCachedThreads bounds the loaded threads kept in memory; idle ones
	// beyond it are dropped and reloaded from the store on demand.
	// DefaultMaxCachedThreads when zero.
	MaxCachedThreads int
	// Observer receives run, admission and state-write facts for metrics;
	// nil means none.
	Observer Observer
}

// DefaultMaxCachedThreads is the default bound of the thread cache. The
// original never evicts (adapter.md §12.12); a long-lived server would grow
// without bound.
const DefaultMaxCachedThreads = 10000

// Adapter admits runs, drives their A2A executions and keeps the per-thread
// mapping. It is safe for concurrent use.
type Adapter struct {
	store  state.Store
	client *a2a.Client
	roots  []string
	log    *slog.Logger
	now    func() time.Time
	obs    Observer

	mu        sync.Mutex // guards threads and lastActivity
	threads   map[string]*thread
	maxCached int
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
	evicted   bool          // dropped from the cache: look the thread up again
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
	if o.MaxCachedThreads <= 0 {
		o.MaxCachedThreads = DefaultMaxCachedThreads
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	return &Adapter{
		store:        o.Store,
		client:       o.Client,
		roots:        o.AllowedRoots,
		log:          o.Logger,
		now:          o.Now,
		obs:          o.Observer,
		threads:      make(map[string]*thread),
		maxCached:    o.MaxCachedThreads,
		lastActivity: o.Now(),
	}
}

// entry returns the cached entry of a thread, loading it on first use.
// Nothing is scanned at start: only the requested thread is read
// (adapter.md §8.7). A missing thread yields an entry with a nil doc.
//
// The entry is returned locked (the caller unlocks t.mu), so it cannot be
// evicted between the lookup and its use.
func (a *Adapter) entry(ctx context.Context, threadID string) (*thread, error) {
	for {
		t, err := a.lookup(ctx, threadID)
		if err != nil || t != nil {
			return t, err
		}
	}
}

// lookup returns the loaded entry locked, or nil when it was evicted
// meanwhile (the caller looks again).
func (a *Adapter) lookup(ctx context.Context, threadID string) (*thread, error) {
	a.mu.Lock()
	t, ok := a.threads[threadID]
	if !ok {
		a.evictLocked()
		t = &thread{}
		a.threads[threadID] = t
	}
	a.mu.Unlock()
	t.mu.Lock()
	if t.evicted {
		t.mu.Unlock()
		return nil, nil
	}
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
		t.evicted = true
		t.mu.Unlock()
		a.mu.Lock()
		if a.threads[threadID] == t {
			delete(a.threads, threadID)
		}
		a.mu.Unlock()
		return nil, err
	}
	return t, nil
}

// evictLocked drops idle threads while the cache is full. A thread is idle
// when no run holds it; its document is durable, so dropping it loses
// nothing. A thread whose lock is busy is skipped. The caller holds a.mu.
func (a *Adapter) evictLocked() {
	if len(a.threads) < a.maxCached {
		return
	}
	for id, t := range a.threads {
		if len(a.threads) < a.maxCached*9/10 {
			return
		}
		if !t.mu.TryLock() {
			continue
		}
		if t.activeRun == "" && t.loaded {
			t.evicted = true
			delete(a.threads, id)
		}
		t.mu.Unlock()
	}
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
	start := time.Now()
	err := a.store.Save(context.WithoutCancel(ctx), t.doc)
	a.obs.StateWrite(err, time.Since(start))
	return err
}

// saveBestEffort persists and only logs a failure to lg, the run's logger
// (adapter.md §11).
func (a *Adapter) saveBestEffort(ctx context.Context, t *thread, lg *slog.Logger) {
	if err := a.save(ctx, t); err != nil {
		lg.Warn("Failed to persist AG-UI thread state", "error", err)
	}
}
