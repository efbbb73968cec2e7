package app

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// silentConns tracks the server's connections that have not sent a byte
// of a request yet (http.StateNew). http.Server.Shutdown waits up to 5 s
// for such a connection before it counts it as idle, and a client's
// transport often holds one it dialled for a request that went on
// another connection: a stopping replica then waited 5 s for nothing
// (docs/decisions.md, "A stopping replica closes connections that sent
// nothing").
type silentConns struct {
	mu    sync.Mutex
	conns map[net.Conn]int // → shutdown ticks it was seen silent at
}

func trackSilentConns(srv *http.Server) *silentConns {
	s := &silentConns{conns: map[net.Conn]int{}}
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if st == http.StateNew {
			s.conns[c] = 0
		} else {
			delete(s.conns, c)
		}
	}
	return s
}

// silentTick is how often shutdown looks for silent connections; one
// seen silent on two looks in a row is closed.
const silentTick = 50 * time.Millisecond

// shutdown is srv.Shutdown(ctx), except that once the listener is closed
// a connection that stays silent for a tick is closed, as an idle one
// is: no request was read from it, so nothing is lost; its client's
// request, if any comes, fails before the server saw it and may be sent
// to another replica.
func (s *silentConns) shutdown(ctx context.Context, srv *http.Server) error {
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	tick := time.NewTicker(silentTick)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			s.mu.Lock()
			for c, seen := range s.conns {
				if seen > 0 {
					_ = c.Close()
					delete(s.conns, c)
				} else {
					s.conns[c] = seen + 1
				}
			}
			s.mu.Unlock()
		}
	}
}
