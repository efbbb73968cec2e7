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
