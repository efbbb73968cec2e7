package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"sync"
)

// maxBatch bounds one batch, so that the first saves of a long queue are
// answered without waiting for the whole queue.
const maxBatch = 256

// maxSpares bounds the spare pool (spare.go).
const maxSpares = 1024

// syncWorkers bounds the fsyncs of one batch that run at once, and the
// files a batch holds open. The file system commits concurrent fsyncs
// together; a few callers suffice for that, and more only add threads
// blocked in the kernel.
const syncWorkers = 16

// saveOp is one Save waiting for its batch.
type saveOp struct {
	path     string
	threadID string
	data     []byte
	prev     Revision
	rev      Revision // revisionOf(data)
	durable  bool
	crash    int64 // the crash hook's write number (test builds only)
	err      error
	done     chan struct{}
}

// committer is the group commit of a FileStore (protocol.md §8.5). Saves
// queue here; one goroutine at a time (the first saver of a burst, then a
// drain goroutine) takes everything queued and commits it as a batch:
// compare every revision, write every new document, and make the batch
// durable once, with one sync of the journal (commit_journal.go) or,
// without one, by fsyncing the documents together, renaming them and
// fsyncing the directory once (commitSynced). Under many concurrent saves
// the file system then sees a few callers doing sequential work instead
// of a thread per save contending for the same directory, and N saves
// cost about one round of syncs. A lone save pays one of each step.
//
// The committer is the only writer of its store's files, so the compare
// and the rename need no lock; readers never wait for it (a rename is
// atomic, they see the old or the new document; one that opened the file
// just before a swap holds a spare, see spares and FileStore.Load).
type committer struct {
	mu      sync.Mutex
	queue   []*saveOp
	running bool
	closed  bool       // Close was called: release the spares when idle
	idle    *sync.Cond // signalled when running turns false
	spares  spares     // used by the running batch only
}

// Close waits until no batch runs and removes the store's spare files
// (spare.go). A save after Close still works, and its spares are removed
// when its batch ends.
func (s *FileStore) Close() error {
	c := &s.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for c.running {
		c.idleCond().Wait()
	}
	c.spares.release()
	if s.journal != nil {
		// Checkpointed and empty: the thread files alone hold the state,
		// as the original's do.
		if err := s.dropJournal(); err != nil {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
	}
	return nil
}

// idleCond returns the condition signalled when the committer stops; the
// caller holds c.mu.
func (c *committer) idleCond() *sync.Cond {
	if c.idle == nil {
		c.idle = sync.NewCond(&c.mu)
	}
	return c.idle
}

// submit queues op and waits until its batch is committed. The first
// saver of a burst leads: it commits the first batch on its own goroutine,
// so a lone save costs no hand-off between goroutines, and leaves what
// queued meanwhile to a drain goroutine, so that it waits for no one
// else's batch. Savers that find a batch running queue behind it.
func (s *FileStore) submit(op *saveOp) error {
	c := &s.commits
	c.mu.Lock()
	c.queue = append(c.queue, op)
	lead := !c.running
	c.running = true
	var batch []*saveOp
	if lead {
		batch = c.nextLocked()
	}
	c.mu.Unlock()
	if lead {
		defer CrashOnPanic("state: commit")
		s.commit(batch)
		c.mu.Lock()
		more := len(c.queue) > 0 || !c.stopLocked()
		c.mu.Unlock()
		if more {
			go s.drain()
		}
	}
	<-op.done
	return op.err
}

// CrashOnPanic, deferred by a store's code that runs on a caller's
// goroutine while it holds a shared role (the committer's batch, a
// pipeline for other callers), makes a panic there end the process, as
// one in a goroutine of its own does: net/http recovers a handler's panic,
// which would leave the role taken and every later call waiting for ever.
// what names the role in the panic's message.
func CrashOnPanic(what string) {
	if r := recover(); r != nil {
		stack := debug.Stack()
		go func() { panic(fmt.Sprintf("%s: %v\n%s", what, r, stack)) }()
		select {}
	}
}

// nextLocked takes the next batch off the queue (nil when it is empty);
// the caller holds c.mu.
func (c *committer) nextLocked() []*saveOp {
	n := min(len(c.queue), maxBatch)
	if n == 0 {
		return nil
	}
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	return batch
}

// stopLocked ends a burst once the queue is empty: false when spares are
// to be made first (the drain goroutine makes them), true when the
// committer stopped. The caller holds c.mu.
func (c *committer) stopLocked() bool {
	c.spares.idle()
	if !c.closed && c.spares.wantMore() {
		return false
	}
	c.running = false
	c.queue = nil
	if c.closed {
		c.spares.release()
	}
	c.idleCond().Broadcast()
	return true
}

// drain commits batches until the queue is empty.
func (s *FileStore) drain() {
	c := &s.commits
	for {
		c.mu.Lock()
		batch := c.nextLocked()
		if batch == nil {
			if c.stopLocked() {
				c.mu.Unlock()
				return
			}
			// Idle: make one spare for the next burst, then look at the
			// queue again, so a save never waits for more than one
			// create.
			c.mu.Unlock()
			c.spares.prefill()
			continue
		}
		c.mu.Unlock()
		s.commit(batch)
	}
}

// target is what a batch writes to one path: the last accepted document
// and every op it answers.
type target struct {
	path     string
	threadID string
	stored   Revision // the revision the batch replaces
	existed  bool     // a document was stored when the batch compared
	rev      Revision // the stored revision, then each accepted op's
	data     []byte
	durable  bool
	ops      []*saveOp
	tmp      string // the new document: a spare or a new temporary file
	spare    bool
	f        *os.File
	err      error
}

// commit writes one batch. Each op gets ErrConflict, an error wrapping
// ErrUnavailable, or nil once its document is in place and durable: its
// journal record synced (commit_journal.go) or, without a journal, the
// file fsynced, renamed and, when durable, the directory fsynced.
func (s *FileStore) commit(batch []*saveOp) {
	order := s.compare(batch)
	if len(order) == 0 {
		return
	}
	if err := s.ensureDirs(); err != nil {
		err = fmt.Errorf("%w: %w", ErrUnavailable, err)
		for _, t := range order {
			t.answer(err)
		}
		return
	}
	if j, n := s.journalFor(order); j != nil {
		if err := j.reserve(n); err == nil {
			s.commitJournaled(order, j)
			return
		}
		// Nothing of this batch is written yet: it goes without the
		// journal, as every later one does (a full disk that has no room
		// to grow the journal, an I/O error).
		_ = s.dropJournal()
	}
	s.commitSynced(order)
}

// commitSynced writes a compared batch without a journal: every new
// document fsynced, renamed, the directory fsynced once.
func (s *FileStore) commitSynced(order []*target) {
	s.writeTemps(order)
	for _, t := range order {
		t.crashAt("temp")
	}
	renamed := false
	for _, t := range order {
		if t.err != nil {
			s.discard(t)
			continue
		}
		if err := s.replace(t); err != nil {
			t.err = err
			continue
		}
		renamed = renamed || t.durable
		t.crashAt("renamed")
	}
	var dirErr error
	if renamed {
		dirErr = syncDir(s.threads)
	}
	for _, t := range order {
		if t.err == nil && t.durable {
			t.err = dirErr
		}
		t.finish()
	}
}

// replace puts t's new document in place: swapped with the stored one
// when t writes a spare over an existing document (the old file becomes a
// spare), renamed otherwise.
func (s *FileStore) replace(t *target) error {
	sp := &s.commits.spares
	if t.spare && t.existed && !sp.broken {
		err := refuseSymlink(t.path)
		if err == nil {
			err = renameWithRetry(t.tmp, t.path, s.exchange)
		}
		switch {
		case err == nil:
			sp.put(t.tmp)
			return nil
		case exchangeUnsupported(err):
			sp.broken = true // every save writes new files from now on
		case !errors.Is(err, fs.ErrNotExist):
			sp.put(t.tmp)
			return err
		}
		// Deleted since the compare, or no exchange here: a plain rename.
	}
	return replaceWith(t.tmp, t.path, s.rename)
}

// discard drops the new document of a target that failed.
func (s *FileStore) discard(t *target) {
	switch {
	case t.tmp == "":
	case t.spare:
		s.commits.spares.put(t.tmp)
	default:
		_ = os.Remove(t.tmp)
	}
}

// compare checks each op's revision in queue order, against the stored
// document or the one an earlier op of the batch replaces it with, and
// answers the ops that lost. It returns the paths to write, in order.
func (s *FileStore) compare(batch []*saveOp) []*target {
	targets := make(map[string]*target, len(batch))
	order := make([]*target, 0, len(batch))
	for _, op := range batch {
		t := targets[op.path]
		if t == nil {
			rev, err := s.revision(op.path)
			if err != nil {
				op.finish(err)
				continue
			}
			t = &target{path: op.path, threadID: op.threadID, rev: rev, stored: rev, existed: rev != NoRevision}
			targets[op.path] = t
		}
		if t.rev != op.prev {
			op.finish(ErrConflict)
			continue
		}
		if len(t.ops) == 0 {
			order = append(order, t)
		}
		t.rev, t.data = op.rev, op.data
		t.durable = t.durable || op.durable
		t.ops = append(t.ops, op)
	}
	return order
}

// writeTemps writes each target's new document, one after another, and
// fsyncs those of durable targets and every spare in syncWorkers
// goroutines while it goes on writing (the last one itself: nothing is
// left to write); each file is closed once synced, so a batch holds at
// most syncWorkers files open (a server at its descriptor limit must not
// fail saves for the batch's sake). A spare is always
// fsynced: it is an old file overwritten in place, and nothing orders an
// overwrite before the swap that follows it, so without the fsync a power
// loss could leave the thread's file with another document's bytes. A new
// temporary file of a best-effort save needs none: the file system writes
// a file renamed over another before that rename. A failure is that
// target's error.
func (s *FileStore) writeTemps(order []*target) {
	open := make(chan struct{}, syncWorkers)
	var wg sync.WaitGroup
	for i, t := range order {
		open <- struct{}{}
		s.writeDocument(t)
		if t.err != nil || !(t.durable || t.spare) {
			t.closeFile(nil)
			<-open
			continue
		}
		if i == len(order)-1 {
			// Nothing left to write: no goroutine to wait for.
			t.closeFile(t.f.Sync())
			<-open
			continue
		}
		wg.Go(func() {
			defer func() { <-open }()
			t.closeFile(t.f.Sync())
		})
	}
	wg.Wait()
}

// writeDocument writes t's new document over a spare or, when there is
// none, into a new temporary file next to t's, and leaves it open in t.f.
func (s *FileStore) writeDocument(t *target) {
	if t.tmp, t.f, t.spare = s.commits.spares.take(t.data); !t.spare {
		t.tmp, t.f, t.err = openTemp(t.path, t.data)
	}
}

// closeFile closes t's open file; err or the close's error becomes t's.
func (t *target) closeFile(err error) {
	if t.f != nil {
		if cerr := t.f.Close(); err == nil {
			err = cerr
		}
		t.f = nil
	}
	if t.err == nil {
		t.err = err
	}
}

// answer answers every op of t with err (nil: committed).
func (t *target) answer(err error) {
	for _, op := range t.ops {
		op.finish(err)
	}
}

// finish answers every op of t with t's error, as ErrUnavailable, or nil.
func (t *target) finish() {
	if t.err != nil {
		t.answer(fmt.Errorf("%w: %w", ErrUnavailable, t.err))
		return
	}
	t.answer(nil)
}

// crashAt is the crash hook's point phase for every op of t (test builds
// only, crashhook.go).
func (t *target) crashAt(phase string) {
	for _, op := range t.ops {
		crashPoint(op.crash, phase)
	}
}

func (op *saveOp) finish(err error) {
	op.err = err
	close(op.done)
}
