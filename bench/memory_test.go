package bench

import (
	"context"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// heapObjects is the runtime/metrics name of the bytes of heap objects,
// live or not yet swept (HeapAlloc). Reading it does not stop the world,
// unlike runtime.ReadMemStats, so sampling it often does not slow the run.
const heapObjects = "/memory/classes/heap/objects:bytes"

// heapSampler records the highest heap-objects value seen while it runs.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func startHeapSampler(every time.Duration) *heapSampler {
	s := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sample := []metrics.Sample{{Name: heapObjects}}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > s.peak.Load() {
				s.peak.Store(v)
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the peak in bytes.
func (s *heapSampler) Stop() uint64 {
	close(s.stop)
	<-s.done
	return s.peak.Load()
}

func heapInuseAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

const mib = 1 << 20

// BenchmarkRelayPeakHeap shows that the relay's memory does not grow with
// the length of a run: the same run at 10k, 100k and 1M deltas. The heap
// is the whole process (fake upstream, adapter, client), sampled every
// millisecond; the upstream and client hold only fixed buffers, so growth
// would be the adapter's.
//
//	peak-heap-MiB  highest HeapAlloc during a run (includes garbage not yet
//	               collected, so it tracks GOGC × live heap)
//	base-heap-MiB  HeapInuse after a GC before the run
//	retained-MiB   HeapInuse after a GC after the run, minus base
func BenchmarkRelayPeakHeap(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run("deltas="+strconv.Itoa(n), func(b *testing.B) {
			e := newRelayEnv(b, upstreamOptions{deltas: n})
			ctx := context.Background()
			// One warm-up run so connection pools and lazily built tables
			// count in the base, not as growth.
			if res, err := e.run(ctx, "warm-"+strconv.Itoa(n), "run", false); err != nil || res.check(n) != nil {
				b.Fatalf("warm-up run failed: %v", err)
			}
			var peak, base, retained uint64
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				i++
				before := heapInuseAfterGC()
				s := startHeapSampler(time.Millisecond)
				res, err := e.run(ctx, threadName("heap"+strconv.Itoa(n), i), "run", false)
				p := s.Stop()
				if err != nil {
					b.Fatal(err)
				}
				if err := res.check(n); err != nil {
					b.Fatal(err)
				}
				after := heapInuseAfterGC()
				peak, base = max(peak, p), max(base, before)
				if after > before {
					retained = max(retained, after-before)
				}
			}
			b.ReportMetric(float64(peak)/mib, "peak-heap-MiB")
			b.ReportMetric(float64(base)/mib, "base-heap-MiB")
			b.ReportMetric(float64(retained)/mib, "retained-MiB")
		})
	}
}
