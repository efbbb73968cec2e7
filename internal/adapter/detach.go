package adapter

import (
	"context"
	"sync"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/mapper"
)

// orphanGrace bounds how long a new turn keeps reading its A2A stream after
// the client left, waiting for the task id it must cancel.
const orphanGrace = 10 * time.Second

// detachUntilTask returns the context for a new turn's A2A stream and a
// wrapper for that stream. A client that leaves before the first frame
// named the task would otherwise abort the stream with nobody knowing
// which task to cancel: the task stays parked upstream and every later
// turn of the thread fails with "Task is already working." (protocol.md
// §9.1). So the stream outlives the client until a frame names the task
// (the run then binds it and cancels it as for any disconnect) or until
// orphanGrace passes. stop must be called when the stream is done.
func detachUntilTask(ctx context.Context) (up context.Context, wrap func(Stream) Stream, stop func()) {
	up, cancel := context.WithCancel(context.WithoutCancel(ctx))
	known := make(chan struct{})
	var once sync.Once
	seen := func() { once.Do(func() { close(known) }) }
	// No goroutine while the client stays: thousands of streams may wait
	// at once (docs/benchmarks.md).
	stopWatch := context.AfterFunc(ctx, func() {
		timer := time.NewTimer(orphanGrace)
		defer timer.Stop()
		select {
		case <-known:
		case <-timer.C:
		case <-up.Done():
			return
		}
		cancel()
	})
	wrap = func(s Stream) Stream { return &taskWatch{Stream: s, seen: seen} }
	return up, wrap, func() { stopWatch(); cancel() }
}

// taskWatch reports the first event that names a task.
type taskWatch struct {
	Stream
	seen  func()
	known bool // seen was called; later events need no look
}

func (w *taskWatch) Next() (*a2a.Event, error) {
	ev, err := w.Stream.Next()
	if err == nil && !w.known {
		if task, _, _ := mapper.Identity(ev); task != "" {
			w.seen()
			w.known = true
		}
	}
	return ev, err
}

// Started reports whether the wrapped stream is in the middle of a frame.
func (w *taskWatch) Started() bool {
	s, ok := w.Stream.(starter)
	return ok && s.Started()
}
