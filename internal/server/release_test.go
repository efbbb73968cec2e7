package server

import (
	"sync"
	"testing"
	"time"
)

// TestStreamCountReleasesAfterBurst: the memory of a burst is released
// once it shrank to a quarter of its peak, a few times per burst at most,
// and never for a small one.
func TestStreamCountReleasesAfterBurst(t *testing.T) {
	var mu sync.Mutex
	releases := 0
	done := make(chan struct{}, 16)
	c := &streamCount{release: func() { mu.Lock(); releases++; mu.Unlock(); done <- struct{}{} }}
	for range 4096 {
		c.opened()
	}
	for range 4096 {
		c.closed()
	}
	// Peaks 4096 → 1024 → 256 → 64: released at 1024, 256 and 64; a
	// burst of 64 is below releaseAfter.
	for range 3 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("memory not released")
		}
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	got := releases
	mu.Unlock()
	if got != 3 {
		t.Fatalf("%d releases after a burst of 4096, want 3", got)
	}
	small := &streamCount{release: func() { t.Error("released after a burst of 100") }}
	for range 100 {
		small.opened()
	}
	for range 100 {
		small.closed()
	}
}
