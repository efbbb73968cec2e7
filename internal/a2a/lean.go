package a2a

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// A call to a plain-HTTP upstream through the default client runs on a
// connection the client owns: net/http's Transport keeps a read and a
// write goroutine and their buffers for every connection, about 14 KiB per
// waiting stream. Here the request is written from a free buffer, the
// response head is parsed with a borrowed reader that goes back right
// after it, and the body's framing is decoded in the SSE reader's own
// buffer, which a waiting stream gives back. Unary calls take the same
// path: when many waiting streams close at once, each cancels its task,
// and through the Transport every one of those calls started a dial and
// two goroutines whose descriptors the runtime never frees.
const (
	maxLeanIdle     = 1024             // idle connections kept
	leanIdleTimeout = 90 * time.Second // as the Transport's IdleConnTimeout
	maxHeadBytes    = 1 << 20
	headReaderSize  = 4 << 10
)

// leanPool dials and keeps the idle connections of one client's lean calls.
type leanPool struct {
	dialer net.Dialer
	mu     sync.Mutex
	idle   []idleConn // oldest first
	sweep  *time.Timer
}

type idleConn struct {
	nc    net.Conn
	since time.Time
}

func newLeanPool() *leanPool {
	return &leanPool{dialer: net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}}
}

// leanFor reports whether a request may take the lean path: the default
// client, plain HTTP, no proxy.
func (c *Client) leanFor(req *http.Request) bool {
	if c.lean == nil || req.URL.Scheme != "http" {
		return false
	}
	u, err := http.ProxyFromEnvironment(req)
	return u == nil && err == nil
}

// roundTrip sends req on an idle or new connection and returns the
// response with a leanBody. Like the Transport, it sends a request again
// on a new connection only when writing it to a reused one failed.
func (p *leanPool) roundTrip(ctx context.Context, req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		nc := p.get()
		reused := nc != nil
		if nc == nil {
			var err error
			if nc, err = p.dialer.DialContext(ctx, "tcp", hostPort(req.URL)); err != nil {
				return nil, urlError(req, err)
			}
		}
		// Cancellation (the caller, the idle watchdog, Close) unblocks a
		// read or write by closing the connection.
		stop := context.AfterFunc(ctx, func() { nc.Close() })
		if err := writeRequest(nc, req); err != nil {
			stop()
			nc.Close()
			if reused && attempt == 0 && req.GetBody != nil && ctx.Err() == nil {
				if req.Body, err = req.GetBody(); err == nil {
					continue
				}
			}
			return nil, urlError(req, err)
		}
		resp, err := readHead(nc, req, p, stop)
		if err != nil {
			stop()
			nc.Close()
			return nil, urlError(req, err)
		}
		return resp, nil
	}
}

func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func urlError(req *http.Request, err error) error {
	return &url.Error{Op: "Post", URL: req.URL.String(), Err: err}
}

// get returns the newest idle connection that is still open, or nil.
func (p *leanPool) get() net.Conn {
	for {
		p.mu.Lock()
		k := len(p.idle)
		if k == 0 {
			p.mu.Unlock()
			return nil
		}
		ic := p.idle[k-1]
		p.idle[k-1] = idleConn{}
		p.idle = p.idle[:k-1]
		p.mu.Unlock()
		// An idle connection must have nothing to read: data or its end
		// means the server closed it or broke the protocol.
		var b [1]byte
		if time.Since(ic.since) < leanIdleTimeout && readNow(ic.nc, b[:]) == 0 {
			return ic.nc
		}
		ic.nc.Close()
	}
}

func (p *leanPool) put(nc net.Conn) {
	p.mu.Lock()
	if len(p.idle) >= maxLeanIdle {
		p.mu.Unlock()
		nc.Close()
		return
	}
	p.idle = append(p.idle, idleConn{nc: nc, since: time.Now()})
	if p.sweep == nil {
		p.sweep = time.AfterFunc(leanIdleTimeout, p.expire)
	}
	p.mu.Unlock()
}

// expire closes the connections idle for leanIdleTimeout and re-arms for
// the oldest of the rest.
func (p *leanPool) expire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	i := 0
	for ; i < len(p.idle) && now.Sub(p.idle[i].since) >= leanIdleTimeout; i++ {
		p.idle[i].nc.Close()
	}
	p.idle = slices.Delete(p.idle, 0, i)
	if len(p.idle) == 0 {
		p.sweep = nil
		return
	}
	p.sweep.Reset(leanIdleTimeout - now.Sub(p.idle[0].since))
}

// closeIdle closes every idle connection.
func (p *leanPool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	if p.sweep != nil {
		p.sweep.Stop()
		p.sweep = nil
	}
	p.mu.Unlock()
	for _, ic := range idle {
		ic.nc.Close()
	}
}
