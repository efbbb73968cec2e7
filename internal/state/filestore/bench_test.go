package filestore

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkSave measures one durable save (an fsync of the file and one of
// the directory) of a typical thread that is already stored.
func BenchmarkSave(b *testing.B) {
	s := New(b.TempDir())
	th := sampleThread("thread-1")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := saveLatest(ctx, s, th); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveNewThread measures the admission of a new thread: one
// durable save of a thread that has no file yet, as suite (b) does.
func BenchmarkSaveNewThread(b *testing.B) {
	s := New(b.TempDir())
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := s.Save(ctx, sampleThread(fmt.Sprintf("thread-%d", i)), NoRevision); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveParallel saves 1,000 existing threads again and again from
// 1,000 goroutines at once, each its own thread: the many-users case,
// where concurrent fsyncs share the file system's journal commits.
//
//	go test ./internal/state/filestore -run '^$' -bench SaveParallel -benchtime 4000x
func BenchmarkSaveParallel(b *testing.B) {
	const threads = 1000
	s := New(b.TempDir())
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
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range threads {
		wg.Go(func() {
			for n := i; n < b.N; n += threads {
				docs[i].Execution.PipelineSequence = int64(n)
				rev, err := s.Save(ctx, docs[i], revs[i])
				if err != nil {
					b.Error(err)
					return
				}
				revs[i] = rev
			}
		})
	}
	wg.Wait()
}

func BenchmarkLoad(b *testing.B) {
	s := New(b.TempDir())
	th := sampleThread("thread-1")
	for i := range 50 {
		th.RunDigests[fmt.Sprintf("run-%d", i)] = hex64('d')
	}
	ctx := context.Background()
	if err := saveLatest(ctx, s, th); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := load(ctx, s, "thread-1"); err != nil {
			b.Fatal(err)
		}
	}
}
