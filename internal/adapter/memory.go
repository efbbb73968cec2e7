package adapter

// idleCloser is implemented by an upstream whose client keeps idle
// connections and free buffers (the A2A client).
type idleCloser interface {
	CloseIdleConnections()
}

// ReleaseMemory is called by the server once a burst of streams is over.
// It closes the upstream connections the burst left idle (each holds two
// goroutines and its buffers until the pool's idle timeout), and drops the
// idle cached threads, as the cache's bound does (protocol.md §8.7): after
// a burst of thousands of new threads they are most of what the process
// still holds, and one that is used again is read back on demand. Threads
// in use are left alone.
func (a *Adapter) ReleaseMemory() {
	if c, ok := a.client.(idleCloser); ok {
		c.CloseIdleConnections()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	threads := make(map[string]*thread)
	for id, t := range a.threads {
		if t.pins > 0 {
			threads[id] = t
		}
	}
	// A new map: the old one's buckets would keep the burst's size.
	a.threads = threads
}
