package server

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// releaseAfter is the smallest burst of open run streams whose memory is
// handed back to the operating system once it is over; releaseDelay lets
// the closed connections' buffers become garbage first, and spares a
// burst that follows within seconds from dialling its upstream connections
// and faulting its pages in again (docs/benchmarks.md).
const (
	releaseAfter = 256
	releaseDelay = 5 * time.Second
)

// streamCount counts the open run streams. When a burst of at least
// releaseAfter streams has shrunk to a quarter of its peak, the memory its
// buffers and stacks held is returned to the operating system once no
// stream has closed for releaseDelay: a server idle after the burst
// allocates nothing, so without this no garbage collection would run for
// minutes and the process would keep the burst's resident size
// (docs/benchmarks.md, open streams).
type streamCount struct {
	mu         sync.Mutex
	open, peak int
	pending    bool        // a release waits for the closes to stop
	timer      *time.Timer // the pending release
	// release is Handler.releaseMemory (freeMemory when nil) and delay
	// releaseDelay; tests may replace them.
	release func()
	delay   time.Duration
}

func (c *streamCount) opened() {
	c.mu.Lock()
	c.open++
	c.peak = max(c.peak, c.open)
	c.mu.Unlock()
}

// count is the number of open run streams.
func (c *streamCount) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

func (c *streamCount) closed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open--
	if c.peak >= releaseAfter && c.open <= c.peak/4 {
		c.peak = c.open
		c.pending = true
	}
	if !c.pending {
		return
	}
	delay := c.delay
	if delay == 0 {
		delay = releaseDelay
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(delay, c.fire)
	} else {
		c.timer.Reset(delay)
	}
}

func (c *streamCount) fire() {
	c.mu.Lock()
	c.pending = false
	release := c.release
	c.mu.Unlock()
	if release == nil {
		release = freeMemory
	}
	release()
}

// releaseMemory lets the adapter drop what the burst left behind (idle
// upstream connections, its cached threads' scattered documents) before
// the memory is returned.
func (h *Handler) releaseMemory() {
	if h.opts.Adapter != nil {
		h.opts.Adapter.ReleaseMemory()
	}
	freeMemory()
}

// freeMemory collects twice, so that the buffers pooled by net/http
// (sync.Pool keeps them one collection longer) go too, and returns the
// freed pages to the operating system.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}
