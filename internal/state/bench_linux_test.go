package state

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSaveChurn saves 1,000 existing threads again and again,
// durably, sequentially and from 1,000 goroutines at once, with spare
// files (spare.go) and with a new temporary file per save as before them
// (the exchange switched off), and reports the whole process's CPU per
// save:
//
//	go test ./internal/state -run '^$' -bench SaveChurn -benchtime 4000x
func BenchmarkSaveChurn(b *testing.B) {
	for _, spares := range []bool{true, false} {
		for _, parallel := range []bool{false, true} {
			b.Run(fmt.Sprintf("spares=%t/parallel=%t", spares, parallel), func(b *testing.B) {
				benchSaveChurn(b, spares, parallel)
			})
		}
	}
}

func benchSaveChurn(b *testing.B, spares, parallel bool) {
	const threads = 1000
	s := NewFileStore(b.TempDir())
	if !spares {
		s.exchange = func(string, string) error { return syscall.EINVAL }
	}
	ctx := context.Background()
	docs := make([]*Thread, threads)
	revs := make([]Revision, threads)
	for i := range docs {
		docs[i] = sampleThread(fmt.Sprintf("thread-%d", i))
		rev, err := s.Save(ctx, docs[i], NoRevision)
		if err != nil {
			b.Fatal(err)
		}
		revs[i] = rev
	}
	save := func(i, n int) {
		docs[i].Execution.PipelineSequence = int64(n)
		rev, err := s.Save(ctx, docs[i], revs[i])
		if err != nil {
			b.Error(err)
			return
		}
		revs[i] = rev
	}
	cpu0 := processCPU()
	b.ResetTimer()
	if parallel {
		var wg sync.WaitGroup
		for i := range threads {
			wg.Go(func() {
				for n := i; n < b.N; n += threads {
					save(i, n)
				}
			})
		}
		wg.Wait()
	} else {
		for n := range b.N {
			save(n%threads, n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/save")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
