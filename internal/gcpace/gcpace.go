// Package gcpace owns how often the garbage collector runs in the server
// process: while the live heap is small it lets the heap grow by a fixed
// headroom (64 MiB, an eighth of a container's memory limit if that is
// less) before the next collection, instead of by the live heap's own size
// (GOGC=100); from a live heap of that size on it is GOGC=100.
//
// Why: a burst of runs grows the heap from a few MiB, and at GOGC=100 the
// collector then runs at 4, 8, 16, 32 … MiB, once every few hundred runs.
// At 1,000 concurrent runs the collector was 11 % of the adapter's CPU; at
// GOGC=200 the adapter used 10–14 % less CPU per event. A fixed GOGC=200
// costs a third more memory at any size, which 10,000 open streams cannot
// afford (522 against 466 MiB); a headroom costs at most itself, and only
// while the heap is small (docs/benchmarks.md, docs/decisions.md).
//
// It must not override the operator: when GOGC is set in the environment
// (off included), it does nothing. It never sets a memory limit
// (GOMEMLIMIT still bounds the heap when set) and never forces a
// collection.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Headroom is how far the heap may grow past the live heap before the next
// collection while the live heap is smaller than the headroom; less in a
// container with a memory limit (HeadroomFor).
const Headroom = 64 << 20

// runtimeMinimum is the runtime's smallest heap goal at GOGC=100; it
// scales with GOGC, so Percent is capped where it reaches the headroom.
const runtimeMinimum = 4 << 20

// HeadroomFor is the headroom under a memory limit of limit bytes (0: no
// limit): an eighth of the limit, at most Headroom, so that a small
// container keeps the memory GOGC=100 would leave it.
func HeadroomFor(limit uint64) uint64 {
	if limit == 0 {
		return Headroom
	}
	return min(Headroom, limit/8)
}

// Percent is the GOGC value that gives a live heap of live bytes a goal of
// about live+headroom: never under 100, and never over the value at which
// the runtime's own minimum goal (4 MiB at 100) would pass the headroom.
func Percent(live, headroom uint64) int {
	if live == 0 || live >= headroom || headroom <= runtimeMinimum {
		return 100
	}
	return int(min(100*headroom/live, 100*headroom/runtimeMinimum))
}

var (
	once     sync.Once
	started  bool
	headroom uint64 // set once by Start
	stopped  atomic.Bool
)

// Start paces the collector for the rest of the process, once; later
// calls do nothing. It reports whether pacing is on: false when GOGC is
// set in the environment, as the runtime reads it, or when the process's
// memory limit leaves no headroom worth having.
func Start() bool {
	once.Do(func() {
		if os.Getenv("GOGC") != "" {
			return
		}
		headroom = HeadroomFor(MemoryLimit("/"))
		if headroom <= runtimeMinimum {
			return
		}
		started = true
		arm()
	})
	return started
}

// sentinel is allocated once per cycle and dropped at once, so its cleanup
// runs after the next collection. The pointer keeps it out of the tiny
// allocator, whose blocks may outlive their objects.
type sentinel struct{ _ *byte }

// arm schedules pace after the next collection.
func arm() {
	runtime.AddCleanup(new(sentinel), func(struct{}) { pace() }, struct{}{})
}

// pace sets GOGC for the live heap the last collection left, then re-arms.
// Changes under a tenth are skipped: each one takes the heap lock.
func pace() {
	if stopped.Load() {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 && s[1].Value.Kind() == metrics.KindUint64 {
		p, c := uint64(Percent(s[0].Value.Uint64(), headroom)), s[1].Value.Uint64()
		if p*10 < c*9 || p*10 > c*11 {
			debug.SetGCPercent(int(p))
		}
	}
	arm()
}

// stop ends the pacing and restores GOGC=100; for tests.
func stop() {
	stopped.Store(true)
	debug.SetGCPercent(100)
}
