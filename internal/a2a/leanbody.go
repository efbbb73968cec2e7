package a2a

import (
	"io"
	"net"
	"sync/atomic"
)

// The body of a lean call (lean.go).

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
