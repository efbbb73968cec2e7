package redisstore

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// maxBatch bounds how many commands one pipeline carries.
const maxBatch = 256

// command is one store command a pipeline can carry.
type command interface {
	// queue adds the command to p and keeps its Cmd for the answer.
	queue(p redis.Pipeliner)
	// resend reports whether the answer asks for the command to be sent
	// once more (queue then sends what it asks for).
	resend() bool
}

// op is one command waiting for its answer.
type op struct {
	c command
	// wake is closed when the answer is in, or receives the batch this op
	// must send next (its own command first) when it becomes the leader.
	wake chan []*op
}

// batcher sends concurrent commands (saves and loads) as pipelines. Under
// many concurrent runs every command would otherwise wait for a pooled
// connection and pay a round trip of its own; the Redis server, which
// shares the machine's CPUs with us as often as not, then spends more on
// system calls than on scripts (docs/benchmarks.md).
//
// A command that finds no pipeline in flight is sent at once, on its
// caller's goroutine: a lone save costs one round trip, as before.
// Commands that arrive meanwhile queue; when the pipeline's answers are
// in, the first queued caller sends the queue (at most maxBatch) for all,
// so every caller returns as soon as its own answer is in and no goroutine
// is kept for the store. The save script compares revisions, so the order
// of commands within a pipeline never matters.
type batcher struct {
	c     redis.UniversalClient
	mu    sync.Mutex
	busy  bool // a pipeline is in flight or about to be
	queue []*op
}

// do runs o and returns once its answer is in.
func (b *batcher) do(c command) {
	o := &op{c: c}
	b.mu.Lock()
	if !b.busy {
		b.busy = true
		b.mu.Unlock()
		b.lead([]*op{o})
		return
	}
	o.wake = make(chan []*op, 1)
	b.queue = append(b.queue, o)
	b.mu.Unlock()
	if batch, ok := <-o.wake; ok {
		b.lead(batch)
	}
}

// lead sends batch, whose first op is the caller's, answers the others and
// hands the queue, if any, to its first op.
func (b *batcher) lead(batch []*op) {
	// Every queued caller waits for this one: a panic must not leave the
	// batcher busy.
	defer state.CrashOnPanic("redisstore: pipeline")
	b.send(batch)
	for _, o := range batch[1:] {
		close(o.wake)
	}
	b.mu.Lock()
	n := min(len(b.queue), maxBatch)
	next := b.queue[:n:n]
	b.queue = b.queue[n:]
	if len(b.queue) == 0 {
		b.queue = nil
	}
	b.busy = n > 0
	b.mu.Unlock()
	if n > 0 {
		next[0].wake <- next
	}
}

// send runs the batch in one pipeline, and the commands that ask for it
// once more in a second. The pipeline is not tied to any caller's
// context: a caller that goes away must not fail the others' commands.
// go-redis's socket timeouts bound it.
func (b *batcher) send(batch []*op) {
	ctx := context.Background()
	_, _ = b.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, o := range batch {
			o.c.queue(p)
		}
		return nil
	})
	var again []command
	for _, o := range batch {
		if o.c.resend() {
			again = append(again, o.c)
		}
	}
	if len(again) == 0 {
		return
	}
	_, _ = b.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range again {
			c.queue(p)
		}
		return nil
	})
}

// saveCmd is a conditional save (saveScript). A server that does not have
// the script yet (first save, restart, SCRIPT FLUSH) gets its text once,
// as Script.Run does.
type saveCmd struct {
	keys []string
	args []any
	text bool // send the script's text, not its hash
	cmd  *redis.Cmd
}

func (c *saveCmd) queue(p redis.Pipeliner) {
	if c.text {
		c.cmd = saveScript.Eval(context.Background(), p, c.keys, c.args...)
	} else {
		c.cmd = saveScript.EvalSha(context.Background(), p, c.keys, c.args...)
	}
}

func (c *saveCmd) resend() bool {
	if c.text || !redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
		return false
	}
	c.text = true
	return true
}

// loadCmd reads a thread's document and revision.
type loadCmd struct {
	key string
	cmd *redis.SliceCmd
}

func (c *loadCmd) queue(p redis.Pipeliner) {
	c.cmd = p.HMGet(context.Background(), c.key, "doc", "rev")
}

func (c *loadCmd) resend() bool { return false }
