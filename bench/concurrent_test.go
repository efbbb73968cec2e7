package bench

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

var benchRuns = flag.Int("runs", 1000, "concurrent runs in BenchmarkRelayConcurrentRuns")

// BenchmarkRelayConcurrentRuns starts -runs runs of 200 deltas together,
// each on its own new thread, with the file store on the test's temp
// directory; the in-process twin of the suite's section (a), for profiles:
//
//	go test ./bench -run '^$' -bench ConcurrentRuns -benchtime 3x -cpuprofile cpu.out -blockprofile block.out -mutexprofile mutex.out
func BenchmarkRelayConcurrentRuns(b *testing.B) {
	const deltas = 200
	e := newRelayEnv(b, upstreamOptions{deltas: deltas})
	n := *benchRuns
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for r := 0; r < n; r++ {
			wg.Go(func() {
				id := fmt.Sprintf("conc-%d-%d", i, r)
				res, err := e.run(context.Background(), id, id, false)
				if err == nil {
					err = res.check(deltas)
				}
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	events := float64(b.N * n * (deltas + 5))
	b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
	// The whole process (client and upstream included): CPU time is what
	// other processes on a shared machine disturb least.
	b.ReportMetric(float64(processCPU()-cpu0)/events/1000, "cpu-µs/event")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
