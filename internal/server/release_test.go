package server

import (
	"sync"
	"testing"
	"time"
)

// TestStreamCountReleasesAfterBurst: the memory of a burst is released
// once, after its streams stopped closing, and never for a small burst.
func TestStreamCountReleasesAfterBurst(t *testing.T) {
	var mu sync.Mutex
	releases := 0
	done := make(chan struct{}, 16)
	c := &streamCount{delay: 20 * time.Millisecond, release: func() { mu.Lock(); releases++; mu.Unlock(); done <- struct{}{} }}
	for range 4096 {
		c.opened()
	}
	for range 4096 {
		c.closed()
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("memory not released")
	}
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	got := releases
	mu.Unlock()
	if got != 1 {
		t.Fatalf("%d releases after a burst of 4096, want 1", got)
	}
	small := &streamCount{delay: 20 * time.Millisecond, release: func() { t.Error("released after a burst of 100") }}
	for range 100 {
		small.opened()
	}
	for range 100 {
		small.closed()
	}
	time.Sleep(200 * time.Millisecond)
}
