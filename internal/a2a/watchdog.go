package a2a

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// watchdog cancels a request when no byte arrived for d. Reads only store a
// timestamp; the timer re-arms itself for the remaining time, so the hot
// path never touches the timer.
type watchdog struct {
	d      time.Duration
	last   atomic.Int64 // unix nanoseconds of the last progress
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	t      *time.Timer
}

func newWatchdog(d time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{d: d, cancel: cancel}
	if d <= 0 {
		return w
	}
	w.last.Store(time.Now().UnixNano())
	w.mu.Lock()
	w.t = time.AfterFunc(d, w.fire)
	w.mu.Unlock()
	return w
}

func (w *watchdog) fire() {
	idle := time.Duration(time.Now().UnixNano() - w.last.Load())
	if idle >= w.d {
		w.cancel(ErrIdleTimeout)
		return
	}
	w.mu.Lock()
	if w.t != nil {
		w.t.Reset(w.d - idle)
	}
	w.mu.Unlock()
}

func (w *watchdog) stop() {
	w.mu.Lock()
	if w.t != nil {
		w.t.Stop()
		w.t = nil
	}
	w.mu.Unlock()
}

// reader wraps r so that every read with data counts as progress.
func (w *watchdog) reader(r io.Reader) io.Reader {
	if w.d <= 0 {
		return r
	}
	return &idleReader{r: r, w: w}
}

type idleReader struct {
	r io.Reader
	w *watchdog
}

func (ir *idleReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if n > 0 {
		ir.w.last.Store(time.Now().UnixNano())
	}
	return n, err
}
