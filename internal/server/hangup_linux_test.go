//go:build linux

package server

import (
	"testing"
	"time"
)

// TestHangupForgotten: a stream the watcher forgot is not cancelled by a
// later hang-up, and its registration is gone.
func TestHangupForgotten(t *testing.T) {
	srv, cli := tcpPair(t)
	p := newParked(srv)
	if !watcher.watch(p) {
		t.Skip("no shared watcher on this system")
	}
	watcher.forget(p)
	cli.Close()
	if cancelledWithin(p, 200*time.Millisecond) {
		t.Fatal("a forgotten stream was cancelled")
	}
	watcher.mu.Lock()
	_, left := watcher.byID[p.hangupID]
	watcher.mu.Unlock()
	if left {
		t.Fatal("the registration is still there")
	}
}

// TestHangupLoopEnds: the watcher's epoll instance and goroutine end once
// no stream has been registered for a while, and the next parked stream
// starts them again.
func TestHangupLoopEnds(t *testing.T) {
	srv, cli := tcpPair(t)
	p := newParked(srv)
	if !watcher.watch(p) {
		t.Skip("no shared watcher on this system")
	}
	watcher.forget(p)
	deadline := time.Now().Add(5 * hangupIdle * time.Millisecond) // other tests' streams may still be ending
	for {
		watcher.mu.Lock()
		running := watcher.running
		watcher.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher still runs with nothing registered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	p2 := newParked(srv)
	if !watcher.watch(p2) {
		t.Fatal("the watcher did not start again")
	}
	defer watcher.forget(p2)
	cli.Close()
	if !cancelledWithin(p2, 5*time.Second) {
		t.Fatal("the restarted watcher missed the hang-up")
	}
}
