package a2a

import (
	"math/bits"
	"sync"
)

// The SSE readers' buffers (4 to 64 KiB by doubling) and the lean
// connections' head readers (lean.go) are kept in bounded free lists
// rather than sync.Pools: a sync.Pool is emptied by every other
// collection, and under 1,000 concurrent runs the collector runs every
// few milliseconds, so each run grew a fresh buffer from 4 to 64 KiB.
const freeBufBytes = 16 << 20 // bytes kept in free buffers at most

var freeBufs struct {
	mu    sync.Mutex
	bytes int
	lists [5][][]byte // by size: sseInitialBuffer << i
}

// getBuf returns a buffer of n bytes, reused when n is one of the sizes.
func getBuf(n int) []byte {
	if i, ok := poolIndex(n); ok {
		freeBufs.mu.Lock()
		l := freeBufs.lists[i]
		if k := len(l); k > 0 {
			b := l[k-1]
			l[k-1] = nil
			freeBufs.lists[i] = l[:k-1]
			freeBufs.bytes -= n
			freeBufs.mu.Unlock()
			return b
		}
		freeBufs.mu.Unlock()
	}
	return make([]byte, n)
}

// putBuf keeps b for reuse unless the free lists hold freeBufBytes.
func putBuf(b []byte) {
	b = b[:cap(b)]
	i, ok := poolIndex(len(b))
	if !ok {
		return
	}
	freeBufs.mu.Lock()
	if freeBufs.bytes+len(b) <= freeBufBytes {
		freeBufs.lists[i] = append(freeBufs.lists[i], b)
		freeBufs.bytes += len(b)
	}
	freeBufs.mu.Unlock()
}

func poolIndex(n int) (int, bool) {
	if n < sseInitialBuffer || n > sseBurstBuffer || n&(n-1) != 0 {
		return 0, false
	}
	return bits.TrailingZeros(uint(n / sseInitialBuffer)), true
}

// dropFreeBufs lets the collector have the free buffers, for the release
// of memory after a burst (Client.CloseIdleConnections).
func dropFreeBufs() {
	freeBufs.mu.Lock()
	freeBufs.lists = [5][][]byte{}
	freeBufs.bytes = 0
	freeBufs.mu.Unlock()
	headReaders.mu.Lock()
	headReaders.free = nil
	headReaders.mu.Unlock()
}
