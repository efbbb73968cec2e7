package state

import (
	"context"
	"sync"
)

type bestEffortKey struct{}

// BestEffort returns a context whose saves need not be durable when Save
// returns: the writes the original does not fail on (protocol.md §8.8,
// the terminal mark and the clean-up after a failed write). A file store
// still replaces the document atomically, so a killed process leaves the
// old or the new document, but it neither fsyncs the file nor waits for
// the directory: the kernel writes it back with its other dirty pages,
// and a power loss may lose it. Conditional semantics are unchanged.
// Stores whose writes cost no fsync ignore it.
func BestEffort(ctx context.Context) context.Context {
	return context.WithValue(ctx, bestEffortKey{}, true)
}

func isBestEffort(ctx context.Context) bool {
	b, _ := ctx.Value(bestEffortKey{}).(bool)
	return b
}

// groupSync is the group commit of the threads directory (protocol.md
// §8.5): a rename is durable once a directory fsync that started after it
// has completed. Savers that finish their renames while one fsync runs all
// wait for the next one, which one of them runs for everyone, so N
// concurrent saves cost about two directory fsyncs instead of N, and no
// saver holds a thread lock while it waits.
type groupSync struct {
	mu       sync.Mutex
	cond     *sync.Cond
	running  bool
	started  uint64 // fsyncs started
	finished uint64 // the last fsync that completed
	errGen   uint64 // the last fsync that failed
	err      error
}

// sync returns once a directory fsync that started after the call has
// completed, or that fsync's error.
func (g *groupSync) sync(dir string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	// The fsync running now may have started before our rename.
	target := g.started + 1
	for g.finished < target {
		if g.running {
			g.cond.Wait()
			continue
		}
		g.running = true
		g.started++
		gen := g.started
		g.mu.Unlock()
		err := syncDir(dir)
		g.mu.Lock()
		g.running = false
		g.finished = gen
		if err != nil {
			g.errGen, g.err = gen, err
		}
		g.cond.Broadcast()
	}
	if g.errGen >= target {
		return g.err
	}
	return nil
}
