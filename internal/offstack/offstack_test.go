package offstack

import (
	"errors"
	"sync"
	"testing"
)

func TestRunCallsOnAnotherGoroutine(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			got := 0
			Run(func() { got = deep(i % 50) })
			if got != i%50 {
				t.Errorf("Run(deep(%d)) = %d", i%50, got)
			}
		})
	}
	wg.Wait()
}

func deep(n int) int {
	var pad [256]byte
	if n == 0 {
		return int(pad[0])
	}
	return deep(n-1) + 1 + int(pad[n%256])
}

func TestRunRaisesPanicInCaller(t *testing.T) {
	want := errors.New("boom")
	defer func() {
		if p := recover(); p != want {
			t.Fatalf("recovered %v, want %v", p, want)
		}
	}()
	Run(func() { panic(want) })
	t.Fatal("Run returned after a panic")
}

func TestRunPanicNil(t *testing.T) {
	defer func() {
		if p := recover(); p == nil {
			t.Fatal("panic(nil) was swallowed")
		}
	}()
	Run(func() { panic(nil) })
}

func TestWorkerSurvivesPanic(t *testing.T) {
	for range 10 {
		func() {
			defer func() { _ = recover() }()
			Run(func() { panic("x") })
		}()
	}
	ran := false
	Run(func() { ran = true })
	if !ran {
		t.Fatal("Run after panics did not run f")
	}
}

func BenchmarkRun(b *testing.B) {
	x := 0
	for b.Loop() {
		Run(func() { x++ })
	}
}
