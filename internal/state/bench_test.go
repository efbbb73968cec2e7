package state

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkSave measures one durable save (two fsyncs) of a typical thread.
func BenchmarkSave(b *testing.B) {
	s := NewFileStore(b.TempDir())
	th := sampleThread("thread-1")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := saveLatest(ctx, s, th); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	s := NewFileStore(b.TempDir())
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

func BenchmarkEncode(b *testing.B) {
	th := sampleThread("thread-1")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeThread(th); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFileKey(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, _ = FileKey("Thread-1")
	}
}

// BenchmarkSaveNewThread measures the admission of a new thread: one
// durable save of a thread that has no file yet, as suite (b) does.
func BenchmarkSaveNewThread(b *testing.B) {
	s := NewFileStore(b.TempDir())
	defer s.Close()
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
