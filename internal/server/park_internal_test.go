package server

import (
	"context"
	"net"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return server, client
}

func newParked(conn net.Conn) *parkedStream {
	p := &parkedStream{conn: conn}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p
}

func cancelledWithin(p *parkedStream, d time.Duration) bool {
	select {
	case <-p.ctx.Done():
		return true
	case <-time.After(d):
		return false
	}
}

// TestHangupWatchers: both ways of noticing a client's close (the shared
// watcher where it exists, a goroutine per stream elsewhere) cancel the
// stream when the client closes, and not while it only sends bytes.
func TestHangupWatchers(t *testing.T) {
	for _, shared := range []bool{true, false} {
		srv, cli := tcpPair(t)
		p := newParked(srv)
		if shared {
			if !watcher.watch(p) {
				t.Skip("no shared watcher on this system")
			}
		} else {
			go p.watch()
		}
		if _, err := cli.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		if cancelledWithin(p, 100*time.Millisecond) {
			t.Fatalf("shared=%v: cancelled by bytes the client sent", shared)
		}
		cli.Close()
		if !cancelledWithin(p, 5*time.Second) {
			t.Fatalf("shared=%v: not cancelled after the client closed", shared)
		}
		watcher.forget(p)
	}
}
