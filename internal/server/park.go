package server

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

var crlf = []byte("\r\n")

// defaultParkAbove is how many run streams may be open before a new one
// is parked (Options.ParkAbove).
const defaultParkAbove = 256

// A parked stream has left net/http: its handler hijacked the connection
// before writing anything and returned, and the run goes on in a goroutine
// of its own that writes the response itself (status line, headers,
// chunked body, "Connection: close"). What net/http keeps per connection
// while a handler runs (read and write buffers, the chunking buffer, the
// request and its headers, the handler's deep stack, the background-read
// goroutine) is then freed: about 14 KiB of each of thousands of streams
// waiting on a stalled upstream (docs/benchmarks.md, open streams). The
// price is the connection: it is closed after the stream instead of
// being kept alive, so streams are parked only while many are open
// (protocol.md §4.1).
type parkedStream struct {
	h    *Handler
	conn net.Conn
	// header is the response's header until the head is written.
	header http.Header
	// ctx is the run's context: the request's values without its
	// cancellation (net/http cancels it when the handler returns), ended
	// instead by watch when the client goes away, or by Drain.
	ctx    context.Context
	cancel context.CancelFunc
	access accessEntry // the access-log line, written when the stream ends
	// hangupID is the stream's registration with the watcher (0: none).
	hangupID uint64

	mu        sync.Mutex // guards the writes below
	wroteHead bool
	bytes     int64
	err       error     // the first failed write: later ones return it
	frame     [4][]byte // head, chunk size line, data, CRLF (one writev)
	sizeLine  [20]byte
}

// parkable reports whether a run stream that is about to start should be
// parked: HTTP/1.1 (chunked body, hijackable) and at least ParkAbove other
// run streams open (a negative ParkAbove parks every stream).
func (h *Handler) parkable(r *http.Request) bool {
	if !r.ProtoAtLeast(1, 1) || r.ProtoMajor != 1 {
		return false
	}
	n := h.opts.ParkAbove
	if n == 0 {
		n = defaultParkAbove
	}
	return n < 0 || h.streams.count() > n
}

// park hijacks the connection of r, which has written nothing yet. It
// returns nil when the connection cannot be taken over, or w is not the
// access log's writer (the stream then stays with net/http).
func (h *Handler) park(w http.ResponseWriter, r *http.Request, ctx context.Context) *parkedStream {
	sw, ok := w.(*statusWriter) // serveLogged's: its access line moves here
	if !ok {
		return nil
	}
	header := w.Header().Clone()
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil
	}
	// The buffered reader Hijack returned holds only what a client sent
	// after its request, which a stream answer ends with a close anyway.
	p := &parkedStream{h: h, conn: conn, header: header, access: newAccessEntry(r, sw)}
	p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.access.ctx = p.ctx
	sw.parked = true // the line is written when the stream ends
	h.parked.add(p)
	if !watcher.watch(p) {
		go p.watch()
	}
	return p
}

// watch cancels the run when the client closes the connection or it
// fails, as net/http's background read does for a handler, where the
// shared watcher (hangups) is not available. Bytes a client sends after
// its request are read and dropped.
func (p *parkedStream) watch() {
	var b [1]byte
	for {
		if _, err := p.conn.Read(b[:]); err != nil {
			p.cancel()
			return
		}
	}
}

// end finishes the response (the last chunk), closes the connection and
// writes the access-log line. The run has returned.
func (p *parkedStream) end() {
	p.mu.Lock()
	if p.writeLocked(nil) == nil {
		_, _ = p.conn.Write([]byte("0\r\n\r\n"))
	}
	bytes := p.bytes
	p.mu.Unlock()
	watcher.forget(p) // before the descriptor can be reused
	_ = p.conn.Close()
	p.cancel()
	p.h.parked.remove(p)
	p.h.logAccess(p.access, http.StatusOK, bytes)
}

// abort closes the connection without ending the response, so the
// client sees a cut stream rather than a complete one.
func (p *parkedStream) abort() {
	p.mu.Lock()
	p.err = net.ErrClosed
	p.mu.Unlock()
	p.end()
}

// Header, Write, WriteHeader, FlushError and SetWriteDeadline make the
// parked connection the agui.Writer's http.ResponseWriter.

func (p *parkedStream) Header() http.Header {
	if p.header == nil {
		return http.Header{} // after the head: changes are too late, as in net/http
	}
	return p.header
}

// WriteHeader records nothing: a run stream's only status is 200.
func (p *parkedStream) WriteHeader(int) {}

// Write sends b as one chunk, with the head before the first.
func (p *parkedStream) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.writeLocked(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// FlushError sends the head when nothing was written yet; a chunk is
// written as soon as it is given.
func (p *parkedStream) FlushError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writeLocked(nil)
}

// SetWriteDeadline sets the connection's write deadline.
func (p *parkedStream) SetWriteDeadline(t time.Time) error {
	return p.conn.SetWriteDeadline(t)
}

// writeLocked writes b as one chunk (nothing when b is empty), after the
// status line and headers when they have not gone yet, in one write. The
// first failure is kept and returned from then on.
func (p *parkedStream) writeLocked(b []byte) error {
	if p.err != nil {
		return p.err
	}
	bufs := net.Buffers(p.frame[:0])
	if !p.wroteHead {
		bufs = append(bufs, p.head())
		p.wroteHead = true
	}
	if len(b) > 0 {
		size := strconv.AppendInt(p.sizeLine[:0], int64(len(b)), 16)
		bufs = append(bufs, append(size, '\r', '\n'), b, crlf)
	}
	if len(bufs) == 0 {
		return nil
	}
	if _, err := bufs.WriteTo(p.conn); err != nil {
		p.err = err
		return err
	}
	p.bytes += int64(len(b))
	return nil
}

// head is the status line and headers of the response; the header map is
// dropped once they are built.
func (p *parkedStream) head() []byte {
	h := p.header
	p.header = nil
	h.Set("Connection", "close")
	h.Set("Transfer-Encoding", "chunked")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	var head bytes.Buffer
	head.WriteString("HTTP/1.1 200 OK\r\n")
	_ = h.Write(&head)
	head.WriteString("\r\n")
	return head.Bytes()
}

// parkedSet tracks the parked streams, so that a shutdown can wait for
// them and end them as net/http ends its own.
type parkedSet struct {
	mu   sync.Mutex
	set  map[*parkedStream]struct{}
	done chan struct{} // closed when set becomes empty; nil while empty
}

func (s *parkedSet) add(p *parkedStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		s.set = map[*parkedStream]struct{}{}
		s.done = make(chan struct{})
	}
	s.set[p] = struct{}{}
}

func (s *parkedSet) remove(p *parkedStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.set, p)
	if len(s.set) == 0 && s.done != nil {
		close(s.done)
		s.done = nil
		s.set = nil // a map keeps its largest size (a burst's) otherwise
	}
}

// Drain waits until no parked stream is left or ctx ends; then it cancels
// the parked streams still running, as a client disconnect would (what
// http.Server.Close does to the streams it serves), and waits up to 2 s
// for them to end. Call it after http.Server.Shutdown: hijacked
// connections are not the server's to wait for.
func (h *Handler) Drain(ctx context.Context) {
	s := &h.parked
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	s.mu.Lock()
	for p := range s.set {
		p.cancel()
	}
	done = s.done
	s.mu.Unlock()
	if done == nil {
		return
	}
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
