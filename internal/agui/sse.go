package agui

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/jsonstr"
)

// DefaultHeartbeat is the idle time after which the writer sends the
// `: heartbeat` comment (protocol reference: 15 seconds).
const DefaultHeartbeat = 15 * time.Second

// ErrWriterClosed is returned by writes after Close.
var ErrWriterClosed = errors.New("agui: SSE writer closed")

const heartbeatFrame = ": heartbeat\n\n"

// maxKeptBuffer bounds the frame buffers bufPool keeps, so one huge event
// does not pin its memory.
const maxKeptBuffer = 1 << 20

// bufPool lends frame buffers between writes: an open stream holds none
// while it waits, and a new stream does not grow its own by doubling.
var bufPool sync.Pool // of *[]byte

// take returns w.buf, borrowing an empty one from bufPool when w has none.
func (w *Writer) take() []byte {
	if w.buf == nil {
		if p, ok := bufPool.Get().(*[]byte); ok {
			w.buf, w.box = (*p)[:0], p
		}
	}
	return w.buf
}

// release gives w.buf back to bufPool once its bytes were written. A
// write does not keep its argument (io.Writer).
func (w *Writer) release() {
	if w.buf != nil && cap(w.buf) <= maxKeptBuffer {
		p := w.box
		if p == nil {
			p = new([]byte)
		}
		*p = w.buf[:0]
		bufPool.Put(p)
	}
	w.buf, w.box = nil, nil
}

// maxHeldBytes bounds what WriteBatchSoon holds: a write of that size
// already costs little per event.
const maxHeldBytes = 64 << 10

// WriterOptions configures a Writer.
type WriterOptions struct {
	// Heartbeat is the idle time before a `: heartbeat` comment. Zero
	// means DefaultHeartbeat; a negative value disables the heartbeat.
	Heartbeat time.Duration
	// Now stamps events (epoch milliseconds). Nil means time.Now.
	Now func() time.Time
	// WriteTimeout bounds how long the client may take to accept one
	// write: a frame or a heartbeat, with its flush. Past it the write
	// fails, which net/http reports as a disconnect (it cancels the
	// request's context). Zero or negative means no bound.
	WriteTimeout time.Duration
}

// Writer writes AG-UI events as SSE frames `data: <json>\n\n` (LF only)
// and keeps the stream alive with heartbeat comments. All methods are safe
// for concurrent use; a frame is never interleaved with another.
//
// The first write or flush error is remembered and returned by every later
// call: the caller treats it as a client disconnect.
type Writer struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	hb  time.Duration
	wt  time.Duration // WriterOptions.WriteTimeout
	now func() time.Time

	mu sync.Mutex
	// buf holds encoded frames not yet written: nil between calls (its
	// memory back in bufPool) except after WriteBatchSoon.
	buf         []byte
	box         *[]byte // buf's box when it came from bufPool
	textHead    []byte  // see WriteBatch
	started     bool
	closed      bool
	noDeadline  bool // SetWriteDeadline is not supported by w
	err         error
	timer       *time.Timer
	lastWritten time.Time // monotonic; drives the heartbeat
	// soon writes what WriteBatchSoon held; soonArmed while it is due.
	soon      *time.Timer
	soonArmed bool
}

// NewWriter returns a Writer over w. Nothing is written until Start (or
// the first Write).
func NewWriter(w http.ResponseWriter, opts WriterOptions) *Writer {
	hb := opts.Heartbeat
	if hb == 0 {
		hb = DefaultHeartbeat
	}
	return &Writer{w: w, rc: http.NewResponseController(w), hb: hb, wt: opts.WriteTimeout, now: opts.Now}
}

// Start writes status 200 with the SSE headers, flushes them and starts
// the heartbeat. Calling it again is a no-op that returns the remembered
// error, if any. Without Start, the first Write or WriteBatch sends the
// headers in the same write as its frames.
func (w *Writer) Start() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.startLocked()
}

func (w *Writer) startLocked() error {
	if fresh, err := w.beginLocked(); !fresh || err != nil {
		return err
	}
	return w.flushHeadersLocked()
}

// beginLocked writes the status and headers without flushing them and
// starts the heartbeat; fresh reports that this call wrote them, so that
// the caller flushes them, with its frames or alone (flushHeadersLocked).
func (w *Writer) beginLocked() (fresh bool, err error) {
	if w.closed {
		return false, ErrWriterClosed
	}
	if w.started || w.err != nil {
		return false, w.err
	}
	w.started = true
	h := w.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Connection", "keep-alive")
	w.w.WriteHeader(http.StatusOK)
	w.lastWritten = time.Now()
	if w.hb > 0 {
		w.timer = time.AfterFunc(w.hb, w.beat)
	}
	return true, nil
}

// flushHeadersLocked flushes the headers beginLocked wrote when no frame
// goes with them.
func (w *Writer) flushHeadersLocked() error {
	w.armDeadline()
	if err := w.rc.Flush(); err != nil {
		return w.fail(err)
	}
	w.lastWritten = time.Now()
	return nil
}

// Write stamps ev, writes it as one frame and flushes. An event that
// cannot be encoded returns an error wrapping ErrInvalidEvent; nothing is
// written and the stream stays usable.
func (w *Writer) Write(ev Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	fresh, err := w.beginLocked()
	if err != nil {
		return err
	}
	buf, err := appendFrame(w.take(), w.stamp(), ev)
	w.buf = buf
	if err != nil {
		return w.headersOnly(fresh, err)
	}
	return w.flushBufLocked()
}

// headersOnly flushes the headers a write began (fresh) but could not
// send with a frame, and returns err, the write's own error.
func (w *Writer) headersOnly(fresh bool, err error) error {
	if fresh {
		if ferr := w.flushHeadersLocked(); err == nil {
			err = ferr
		}
	}
	return err
}

// WriteBatch writes several frames with one flush. If any event cannot be
// encoded, nothing of the batch is written.
func (w *Writer) WriteBatch(evs []Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	fresh, err := w.beginLocked()
	if err != nil {
		return err
	}
	if err := w.appendBatchLocked(evs); err != nil || len(w.buf) == 0 {
		return w.headersOnly(fresh, err)
	}
	return w.flushBufLocked()
}

// WriteBatchSoon is WriteBatch, except that the frames may wait up to
// within before they are written, unless maxHeldBytes are held: a burst
// that arrives in pieces then costs one write. The next Write, WriteBatch
// or Close writes them first, in order. An encoding error is reported at
// once, as by WriteBatch.
func (w *Writer) WriteBatchSoon(evs []Event, within time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.appendBatchLocked(evs); err != nil || len(w.buf) == 0 {
		return err
	}
	if len(w.buf) >= maxHeldBytes {
		return w.flushBufLocked() // enough for one write to pay
	}
	if w.soonArmed {
		return nil
	}
	w.soonArmed = true
	if w.soon == nil {
		w.soon = time.AfterFunc(within, w.writeSoon)
	} else {
		w.soon.Reset(within)
	}
	return nil
}

// appendBatchLocked encodes evs after the held frames; on an encoding
// error it drops the batch and keeps what was held.
func (w *Writer) appendBatchLocked(evs []Event) error {
	if err := w.startLocked(); err != nil {
		return err
	}
	if w.err != nil {
		return w.err
	}
	if len(evs) == 0 {
		return nil
	}
	ts := w.stamp()
	buf := w.take()
	n := len(buf)
	var err error
	var textID string // the message id w.textHead was built for
	haveHead := false
	for _, ev := range evs {
		// Text deltas, most of a batch, share everything before their
		// delta: built once per message id and batch (same bytes as
		// appendFrame).
		if tc, ok := ev.(*TextMessageContent); ok && tc != nil {
			if !haveHead || tc.MessageID != textID {
				w.textHead = appendTextHead(w.textHead[:0], ts, tc.MessageID)
				textID, haveHead = tc.MessageID, true
			}
			buf = append(buf, w.textHead...)
			buf = append(jsonstr.Append(buf, tc.Delta), '}', '\n', '\n')
			continue
		}
		if buf, err = appendFrame(buf, ts, ev); err != nil {
			w.buf = buf[:n]
			return err
		}
	}
	w.buf = buf
	return nil
}

// writeSoon runs on the soon timer and writes what is still held. A write
// stops the timer, but one that already fired may find nothing, or newer
// frames, which were held for less than their bound.
func (w *Writer) writeSoon() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.soonArmed = false
	if !w.closed && len(w.buf) > 0 {
		_ = w.flushBufLocked()
	}
}

// appendTextHead appends a TEXT_MESSAGE_CONTENT frame up to its delta
// string: `data: {"type":…,"timestamp":…,"messageId":…,"delta":`.
func appendTextHead(dst []byte, ts int64, messageID string) []byte {
	dst = append(dst, "data: "...)
	dst = field(open(dst, TypeTextMessageContent, ts), "messageId", messageID)
	return append(dst, `,"delta":`...)
}

// Close stops the heartbeat; later writes return ErrWriterClosed. It does
// not close the underlying connection and is idempotent. It gives the end
// of the response, which net/http writes after the handler, a fresh
// WriteTimeout.
func (w *Writer) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started && !w.closed && w.err == nil {
		if len(w.buf) > 0 {
			_ = w.flushBufLocked() // frames held by WriteBatchSoon
		} else {
			w.armDeadline()
		}
	}
	w.closed = true
	w.stopTimer()
}

// Err returns the remembered write or flush error, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func appendFrame(dst []byte, ts int64, ev Event) ([]byte, error) {
	n := len(dst)
	dst = append(dst, "data: "...)
	dst, err := EncodeEvent(dst, ts, ev)
	if err != nil {
		return dst[:n], err
	}
	return append(dst, '\n', '\n'), nil
}

func (w *Writer) stamp() int64 {
	if w.now != nil {
		return w.now().UnixMilli()
	}
	return time.Now().UnixMilli()
}

// beat runs on the heartbeat timer. Writes do not reset the timer (that
// would cost a runtime timer update per delta); instead beat checks how
// long the stream has really been idle and re-arms for the remainder.
func (w *Writer) beat() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.err != nil || w.timer == nil {
		return
	}
	if idle := time.Since(w.lastWritten); idle < w.hb {
		w.timer.Reset(w.hb - idle)
		return
	}
	w.buf = append(w.take(), heartbeatFrame...)
	if w.flushBufLocked() == nil {
		w.timer.Reset(w.hb)
	}
}

// flushBufLocked writes w.buf and flushes, remembering any failure.
func (w *Writer) flushBufLocked() error {
	if w.err != nil {
		return w.err
	}
	if w.soonArmed {
		// Nothing is held after this write: a timer that fires would
		// cost a goroutine for nothing.
		w.soon.Stop()
		w.soonArmed = false
	}
	w.armDeadline()
	_, err := w.w.Write(w.buf)
	w.release()
	if err != nil {
		return w.fail(err)
	}
	if err := w.rc.Flush(); err != nil {
		return w.fail(err)
	}
	w.lastWritten = time.Now()
	return nil
}

// armDeadline gives the write that follows (and its flush) WriteTimeout
// from now; without a WriteTimeout it lifts any server-wide one, so that a
// long stream is never cut for its length. The deadline is not lifted
// after the write: it also bounds the end of the response, which net/http
// writes once the handler has returned, and the server clears it when the
// connection's next request starts. Errors other than "not supported" are
// left to the write itself to surface.
func (w *Writer) armDeadline() {
	if w.noDeadline {
		return
	}
	var d time.Time
	if w.wt > 0 {
		d = time.Now().Add(w.wt)
	}
	if err := w.rc.SetWriteDeadline(d); errors.Is(err, http.ErrNotSupported) {
		w.noDeadline = true
	}
}

func (w *Writer) fail(err error) error {
	w.err = err
	w.stopTimer()
	return err
}

func (w *Writer) stopTimer() {
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.soon != nil {
		w.soon.Stop()
	}
}
