package demoagent

import "time"

// Retention: the agent runs for weeks as the product's default upstream,
// so it forgets what no client can still ask for. A task is idle when no
// run is going and it waits for no input; only idle tasks are evicted,
// oldest first, past Options.MaxIdleTasks or Options.TaskRetention. A
// context is idle when it has no task left; idle contexts go the same way
// with MaxIdleContexts and ContextRetention. Limits are checked whenever a
// task starts or goes idle, so an agent without traffic keeps what it has.

// Default limits (docs/decisions.md, "Demo agent retention").
const (
	DefaultMaxIdleTasks     = 1000
	DefaultTaskRetention    = time.Hour
	DefaultMaxIdleContexts  = 10000
	DefaultContextRetention = 24 * time.Hour
)

// Per-task bounds. History and artifacts only grow when a client reuses a
// task id turn after turn, the journal when a pipeline input is answered
// wrongly again and again.
const (
	// maxHistory bounds Task.history of a live task: every text delta
	// replaces a status message and so adds one entry.
	maxHistory = 1000
	// idleHistory is what an idle task keeps: the history length the
	// adapter asks for when it resumes (protocol.md §11 step 3).
	idleHistory = 100
	// maxArtifacts and maxJournal bound Task.artifacts and the pipeline
	// journal (the full pipeline script journals about 60 events).
	maxArtifacts = 100
	maxJournal   = 1000
)

// idleEntry is a task or context in an idle list, oldest first.
type idleEntry struct {
	since time.Time
	task  *taskRec
	ctx   *ctxRec
}

// trimTail keeps the newest n entries once s holds more than 2n, so a
// slice growing by appends costs amortised O(1) per entry.
func trimTail[T any](s []T, n int) []T {
	if len(s) > 2*n {
		return append(s[:0:0], s[len(s)-n:]...)
	}
	return s
}

// newCtxLocked registers a context; it starts idle (no task yet). Caller
// holds a.mu.
func (a *Agent) newCtxLocked(c *ctxRec) {
	a.ctxs[c.id] = c
	c.idle = a.idleCtxs.PushBack(idleEntry{since: time.Now(), ctx: c})
}

// attachLocked stores a task and counts it against its context; it also
// takes back a task (or context) evicted between a lookup and its next run.
// Caller holds a.mu.
func (a *Agent) attachLocked(t *taskRec) {
	if a.tasks[t.t.ID] == t {
		return
	}
	a.tasks[t.t.ID] = t
	if c := t.ctx; c != nil {
		if a.ctxs[c.id] == nil {
			a.ctxs[c.id] = c
		}
		c.ntasks++
		if c.idle != nil {
			a.idleCtxs.Remove(c.idle)
			c.idle = nil
		}
	}
}

// touchCtxLocked moves an idle context to the young end of the idle list
// when a message names it. Caller holds a.mu.
func (a *Agent) touchCtxLocked(c *ctxRec) {
	if c.idle != nil {
		c.idle.Value = idleEntry{since: time.Now(), ctx: c}
		a.idleCtxs.MoveToBack(c.idle)
	}
}

// busyLocked takes a task off the idle list when a run starts on it.
// Caller holds a.mu.
func (a *Agent) busyLocked(t *taskRec) {
	if t.idle != nil {
		a.idleTasks.Remove(t.idle)
		t.idle = nil
	}
}

// idleLocked puts a task that neither runs nor waits for input at the end
// of the idle list, compacts it, and applies the limits. Caller holds a.mu.
func (a *Agent) idleLocked(t *taskRec) {
	if t.active || t.wait != nil {
		return
	}
	if a.tasks[t.t.ID] != t {
		return // already evicted
	}
	a.busyLocked(t)
	t.t.History = compact(t.t.History, idleHistory)
	t.t.Artifacts = compact(t.t.Artifacts, maxArtifacts)
	t.journal = compact(t.journal, maxJournal)
	now := time.Now()
	t.idle = a.idleTasks.PushBack(idleEntry{since: now, task: t})
	a.sweepLocked(now)
}

// compact keeps the newest n entries in a slice of their own size.
func compact[T any](s []T, n int) []T {
	if len(s) > n {
		return append(s[:0:0], s[len(s)-n:]...)
	}
	return s
}

// sweepLocked evicts idle tasks and contexts past the limits at now.
// Caller holds a.mu.
func (a *Agent) sweepLocked(now time.Time) {
	o := &a.opts
	var gone []string // forgotten sessions with a backup file
	for e := a.idleTasks.Front(); e != nil; e = a.idleTasks.Front() {
		en := e.Value.(idleEntry)
		if a.idleTasks.Len() <= o.MaxIdleTasks && now.Sub(en.since) < o.TaskRetention {
			break
		}
		a.idleTasks.Remove(e)
		t := en.task
		t.idle = nil
		delete(a.tasks, t.t.ID)
		if c := t.ctx; c != nil {
			c.ntasks--
			if c.ntasks == 0 && a.ctxs[c.id] == c {
				c.idle = a.idleCtxs.PushBack(idleEntry{since: now, ctx: c})
			}
		}
	}
	for e := a.idleCtxs.Front(); e != nil; e = a.idleCtxs.Front() {
		en := e.Value.(idleEntry)
		if a.idleCtxs.Len() <= o.MaxIdleContexts && now.Sub(en.since) < o.ContextRetention {
			break
		}
		a.idleCtxs.Remove(e)
		en.ctx.idle = nil
		delete(a.ctxs, en.ctx.id)
		if en.ctx.saved {
			gone = append(gone, en.ctx.sessionID)
		}
	}
	if len(gone) > 0 {
		a.runsWG.Add(1)
		go func() {
			defer a.runsWG.Done()
			a.dropBackups(gone)
		}()
	}
}
