package adapter

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/iac-code-agui/iac-code-agui/internal/fence"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Options configures an Adapter.
type Options struct {
	Store state.Store
	// Upstream is the A2A server (A2A wraps the A2A client).
	Upstream Upstream
	// AllowedRoots are the resolved workspace roots (request.AllowedRoots).
	AllowedRoots *request.Roots
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

	// Tracer makes the admission and run spans (trace.go); nil means none.
	Tracer trace.Tracer

	// ExcludedWorkspaces are directories no workspace may be in or below:
	// the state directory (protocol.md §3.4).
	ExcludedWorkspaces []string
	// CopilotKitCompat turns on --compat copilotkit (compat.go).
	CopilotKitCompat bool
	// Fence is the session-handoff writer fence (fence.go); nil is off.
	Fence *fence.Fence
	// Generic fronts any A2A 1.0 agent instead of iac-code (generic.go,
	// --a2a-profile generic).
	Generic bool
}

// DefaultMaxCachedThreads is the default bound of the thread cache. The
// original never evicts (protocol.md §12.12); a long-lived server would grow
// without bound. The bound is for idle threads: threads in use are never
// dropped, however many, and each leaves the cache when its last holder
// lets go while the cache is over the bound, so a burst of runs gives its
// memory back when it ends. Reloading an evicted thread costs one read.
const DefaultMaxCachedThreads = 1000

// Adapter admits runs, drives their A2A executions and keeps the per-thread
// mapping. It is safe for concurrent use.
type Adapter struct {
	store  state.Store
	client Upstream
	roots  *request.Roots
	log    *slog.Logger
	now    func() time.Time
	obs    Observer
	tracer trace.Tracer // nil: tracing is off
	compat compat

	mu        sync.Mutex // guards threads and lastActivity
	threads   map[string]*thread
	maxCached int
	// lastActivity is the time of the last admission or release (idle
	// shutdown, protocol.md §2.10).
	lastActivity time.Time

	excluded []string // Options.ExcludedWorkspaces

	stop    *stopper // graceful shutdown (shutdown.go)
	fence   *fence.Fence
	generic bool // Options.Generic
}

// thread is the in-memory entry of one loaded thread. Its mutex guards doc,
// rev and the active run; it is held across a save so that two writers of
// the same thread are serialised while different threads proceed in
// parallel.
//
// doc is immutable once installed: update replaces it with a saved copy and
// nothing writes into it, so a reader may keep the pointer it read under
// the lock and use it after unlocking (view).
type thread struct {
	mu        sync.Mutex
	loaded    bool           // the store was read (doc stays nil for a new thread)
	doc       *state.Thread  // nil until the thread's first admission
	rev       state.Revision // the stored revision doc was loaded or saved at
	activeRun string         // in memory only: a restart clears it (protocol.md §6)
	// interruptRun is the run whose interrupt outcome announced the
	// pending interrupts (compat.go); in memory only, like activeRun.
	interruptRun string
	// epoch is the writer-fence epoch doc was loaded under (fence.go).
	epoch int64

	// pins counts the operations holding the entry (a run, a cancel); it
	// is guarded by Adapter.mu. A pinned entry is never evicted, so there
	// is at most one entry per thread and no operation can write through
	// an entry the cache has forgotten.
	pins int
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
		client:       o.Upstream,
		roots:        o.AllowedRoots,
		log:          o.Logger,
		now:          o.Now,
		obs:          o.Observer,
		tracer:       o.Tracer,
		compat:       compat{copilotKit: o.CopilotKitCompat},
		threads:      make(map[string]*thread),
		maxCached:    o.MaxCachedThreads,
		lastActivity: o.Now(),
		excluded:     o.ExcludedWorkspaces,
		stop:         newStopper(),
		fence:        o.Fence,
		generic:      o.Generic,
	}
}

// acquire returns the pinned, loaded entry of a thread; the caller
// unpins it with a.unpin when its operation ends. Nothing is scanned at
// start: only the requested thread is read (protocol.md §8.7). A missing
// thread yields an entry with a nil doc.
func (a *Adapter) acquire(ctx context.Context, threadID string) (*thread, error) {
	a.mu.Lock()
	t, ok := a.threads[threadID]
	if !ok {
		a.evictLocked()
		t = &thread{}
		a.threads[threadID] = t
	}
	t.pins++
	a.mu.Unlock()
	t.mu.Lock()
	err := a.loadLocked(ctx, t, threadID)
	t.mu.Unlock()
	if err != nil {
		a.unpin(threadID, t)
		return nil, err
	}
	return t, nil
}

// loadLocked reads the thread from the store unless it is loaded; the
// caller holds t.mu. A failure is not cached: a repaired file must become
// usable.
func (a *Adapter) loadLocked(ctx context.Context, t *thread, threadID string) error {
	if err := a.fenceEpoch(t, threadID); err != nil {
		return err
	}
	if t.loaded {
		return nil
	}
	doc, rev, err := a.store.Load(ctx, threadID)
	switch {
	case err == nil:
		t.doc, t.rev = doc, rev
	case isNotFound(err):
		t.doc, t.rev = nil, state.NoRevision
	default:
		return err
	}
	t.loaded = true
	return nil
}

// unpin ends an operation's hold on an entry. An entry that never loaded
// leaves the cache with its last holder, and so does any entry while the
// cache holds more than its bound (the threads of a burst).
func (a *Adapter) unpin(threadID string, t *thread) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t.pins--
	if t.pins == 0 && a.threads[threadID] == t {
		t.mu.Lock()
		loaded := t.loaded
		t.mu.Unlock()
		if !loaded || len(a.threads) > a.maxCached {
			delete(a.threads, threadID)
		}
	}
}

// evictLocked drops unpinned threads while the cache is full. An unpinned
// thread has no run and no operation in flight; its document is durable,
// so dropping it loses nothing. The caller holds a.mu.
func (a *Adapter) evictLocked() {
	if len(a.threads) < a.maxCached {
		return
	}
	for id, t := range a.threads {
		if len(a.threads) < a.maxCached*9/10 {
			return
		}
		if t.pins == 0 {
			delete(a.threads, id)
		}
	}
}

// view returns the thread's current document (nil for a thread never
// admitted). Installed documents are never modified, so the result may be
// read without the lock; it is a snapshot, not a reservation.
func (a *Adapter) view(t *thread) *state.Thread {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.doc
}

// touch records activity for the idle monitor.
func (a *Adapter) touch() {
	a.mu.Lock()
	a.lastActivity = a.now()
	a.mu.Unlock()
}

// Idle reports whether no loaded thread has an active run or pending
// interrupts, and how long ago the last activity was (protocol.md §2.10).
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
