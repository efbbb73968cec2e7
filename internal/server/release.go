package server

import (
	"runtime/debug"
	"sync"
)

// releaseAfter is the smallest burst of open run streams whose memory is
// handed back to the operating system once it is over.
const releaseAfter = 256

// streamCount counts the open run streams. When a burst of at least
// releaseAfter streams has shrunk to a quarter of its peak, the memory its
// buffers and stacks held is returned to the operating system at once:
// a server idle after the burst allocates nothing, so without this no
// garbage collection would run for minutes and the process would keep the
// burst's resident size (docs/benchmarks.md, open streams). At most about
// log4(peak) releases per burst.
type streamCount struct {
	mu         sync.Mutex
	open, peak int
	// release is debug.FreeOSMemory; tests may replace it.
	release func()
}

func (c *streamCount) opened() {
	c.mu.Lock()
	c.open++
	c.peak = max(c.peak, c.open)
	c.mu.Unlock()
}

func (c *streamCount) closed() {
	c.mu.Lock()
	c.open--
	due := c.peak >= releaseAfter && c.open <= c.peak/4
	if due {
		c.peak = c.open
	}
	c.mu.Unlock()
	if due {
		release := c.release
		if release == nil {
			release = debug.FreeOSMemory
		}
		go release()
	}
}
