package a2a

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
)

// The request and the response head of a lean call (lean.go).

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
