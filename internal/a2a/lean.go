package a2a

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// A streaming call to a plain-HTTP upstream through the default client
// runs on a connection the client owns: net/http's Transport keeps a read
// and a write goroutine and their buffers for every connection, about
// 14 KiB per waiting stream. Here the request is written from a free
// buffer, the response head is parsed with a borrowed reader that goes
// back right after it, and the body's framing is decoded in the SSE
// reader's own buffer, which a waiting stream gives back.
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

// leanFor reports whether a streaming request may take the lean path: the
// default client, plain HTTP, no proxy.
func (c *Client) leanFor(req *http.Request) bool {
	if c.lean == nil || req.URL.Scheme != "http" {
		return false
	}
	u, err := http.ProxyFromEnvironment(req)
	return u == nil && err == nil
}

var headReaders struct {
	mu   sync.Mutex
	free []*bufio.Reader
}

func getHeadReader(r io.Reader) *bufio.Reader {
	headReaders.mu.Lock()
	if k := len(headReaders.free); k > 0 {
		br := headReaders.free[k-1]
		headReaders.free = headReaders.free[:k-1]
		headReaders.mu.Unlock()
		br.Reset(r)
		return br
	}
	headReaders.mu.Unlock()
	return bufio.NewReaderSize(r, headReaderSize)
}

func putHeadReader(br *bufio.Reader) {
	br.Reset(nil)
	headReaders.mu.Lock()
	if len(headReaders.free) < 256 {
		headReaders.free = append(headReaders.free, br)
	}
	headReaders.mu.Unlock()
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

// reqWriter buffers the request head in a free buffer and writes larger
// pieces (a body with an image) straight through. Being an io.ByteWriter
// keeps Request.Write from adding a bufio.Writer of its own.
type reqWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (w *reqWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if len(w.buf)+len(p) > cap(w.buf) {
		w.flush()
		if w.err == nil && len(p) >= cap(w.buf) {
			_, w.err = w.w.Write(p)
		}
		if w.err != nil {
			return 0, w.err
		}
		if len(p) >= cap(w.buf) {
			return len(p), nil
		}
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *reqWriter) WriteByte(c byte) error {
	if len(w.buf) == cap(w.buf) {
		w.flush()
	}
	if w.err != nil {
		return w.err
	}
	w.buf = append(w.buf, c)
	return nil
}

func (w *reqWriter) flush() {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
}

func writeRequest(nc net.Conn, req *http.Request) error {
	buf := getBuf(sseInitialBuffer)
	w := &reqWriter{w: nc, buf: buf[:0]}
	err := req.Write(w)
	if err == nil {
		w.flush()
		err = w.err
	}
	putBuf(buf)
	return err
}

// readHead reads the response head (skipping 1xx answers) and hands the
// bytes read past it to the body.
func readHead(nc net.Conn, req *http.Request, p *leanPool, stop func() bool) (*http.Response, error) {
	lr := &io.LimitedReader{R: nc, N: maxHeadBytes}
	br := getHeadReader(lr)
	defer putHeadReader(br)
	var resp *http.Response
	var err error
	for {
		resp, err = http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	b := &leanBody{nc: nc, pool: p, stop: stop, left: uint64(max(resp.ContentLength, 0))}
	switch {
	case slices.Contains(resp.TransferEncoding, "chunked"):
		b.mode = bodyChunked
	case resp.ContentLength >= 0:
		b.mode = bodyLength
	default:
		b.mode = bodyClose
	}
	b.reuse = !resp.Close && resp.StatusCode != http.StatusSwitchingProtocols
	if n := br.Buffered(); n > 0 {
		rest, _ := br.Peek(n)
		b.preBuf = getBuf(sseInitialBuffer) // n <= headReaderSize
		b.pre = b.preBuf[:copy(b.preBuf, rest)]
	}
	resp.Body = b
	if b.mode == bodyLength && b.left == 0 {
		b.end(b.reuse)
		b.err = io.EOF
	}
	return resp, nil
}

const (
	bodyChunked = iota
	bodyLength
	bodyClose
)

// Connection states of a leanBody: the body owns it, it went back to the
// pool, or it was closed.
const (
	connOwned int32 = iota
	connPooled
	connClosed
)

// leanBody reads a response body off a lean connection. Read is for one
// goroutine; Close may come from another while Read blocks (Stream.Close).
type leanBody struct {
	nc     net.Conn
	pool   *leanPool
	stop   func() bool // unregisters the cancellation
	mode   uint8
	reuse  bool   // the response allows keep-alive
	left   uint64 // bodyLength: bytes left
	dec    chunkDecoder
	pre    []byte // bytes read with the head, not yet returned
	preBuf []byte
	err    error
	state  atomic.Int32
	busy   atomic.Int32 // 1 while Read runs, 2 once finish or Close took the body
}

func (b *leanBody) Read(p []byte) (int, error) {
	if !b.busy.CompareAndSwap(0, 1) {
		return 0, ErrStreamClosed
	}
	n, err := b.read(p)
	b.busy.CompareAndSwap(1, 0)
	return n, err
}

func (b *leanBody) read(p []byte) (int, error) {
	for {
		if b.err != nil {
			return 0, b.err
		}
		if len(p) == 0 {
			return 0, nil
		}
		q := p
		if b.mode == bodyLength && uint64(len(q)) > b.left {
			q = q[:b.left]
		}
		var n int
		var err error
		if len(b.pre) > 0 {
			n = copy(q, b.pre)
			b.pre = b.pre[n:]
		} else {
			n, err = b.nc.Read(q)
		}
		switch b.mode {
		case bodyLength:
			b.left -= uint64(n)
			if b.left == 0 {
				b.end(b.reuse)
				err = io.EOF
			} else if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
		case bodyChunked:
			var derr error
			n, derr = b.dec.decode(q[:n])
			switch {
			case derr != nil:
				err = derr
			case b.dec.done():
				b.end(b.reuse && !b.dec.extra)
				err = io.EOF
			case err == io.EOF:
				err = io.ErrUnexpectedEOF
			}
		case bodyClose:
			if err == io.EOF {
				b.end(false)
			}
		}
		if err != nil {
			b.err = err
			if err != io.EOF {
				b.end(false)
			}
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// end settles the connection once the body is over: back to the pool
// when it was read to its end cleanly and nothing cancelled the call,
// closed otherwise.
func (b *leanBody) end(reuse bool) {
	if b.preBuf != nil {
		reuse = reuse && len(b.pre) == 0
		putBuf(b.preBuf)
		b.pre, b.preBuf = nil, nil
	}
	if reuse && b.stop() && b.state.CompareAndSwap(connOwned, connPooled) {
		b.pool.put(b.nc)
		return
	}
	b.Close()
}

// finish is called when the caller is done with the body, before the
// call is cancelled. A stream is usually closed right after the turn's
// last frame, when the chunked body's end has arrived but was not read:
// reading it now, without waiting, lets the connection go back to the
// pool. Nothing is done while a Read runs on another goroutine.
func (b *leanBody) finish() {
	if !b.busy.CompareAndSwap(0, 2) || b.err != nil || b.mode != bodyChunked {
		return
	}
	var tail [64]byte
	for range 4 {
		p := tail[:]
		var n int
		if len(b.pre) > 0 {
			n = copy(p, b.pre)
			b.pre = b.pre[n:]
		} else if n = readNow(b.nc, p); n <= 0 {
			return
		}
		m, err := b.dec.decode(p[:n])
		if err != nil || m > 0 {
			return // unread data: the stream was not over
		}
		if b.dec.done() {
			b.err = io.EOF
			b.end(b.reuse && !b.dec.extra)
			return
		}
	}
}

// Close closes the connection unless the body already gave it back.
func (b *leanBody) Close() error {
	if b.state.CompareAndSwap(connOwned, connClosed) {
		b.nc.Close()
	}
	return nil
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
