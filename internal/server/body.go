package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// errTooLarge reports a body over its limit, by header or while reading.
var errTooLarge = errors.New("request body too large")

// defaultBodyBudget is Options.BodyBudget's default: 21 run bodies of the
// largest size at once, any number of ordinary ones.
const defaultBodyBudget = 256 << 20

// readBody reads at most limit bytes of the body, checking Content-Length
// first and counting while reading (protocol.md §2.5 step 4), once the
// body budget has room for it (reserve). The read deadline ServeHTTP set
// still applies; it is lifted when the body is in. release gives the
// budget back; it is never nil.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, release func(), err error) {
	if r.ContentLength > limit {
		return nil, noRelease, errTooLarge
	}
	n := limit
	if r.ContentLength >= 0 {
		n = r.ContentLength
	}
	release, err = h.reserve(r.Context(), n)
	if err != nil {
		return nil, noRelease, err
	}
	// An announced body gets room for all of it and the read that sees
	// its end, so the buffer is allocated once instead of doubling up to
	// twice its size; one of unknown length grows as it comes.
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, limit+1)); err != nil {
		release()
		return nil, noRelease, err
	}
	if int64(buf.Len()) > limit {
		release()
		return nil, noRelease, errTooLarge
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return buf.Bytes(), release, nil
}

func noRelease() {}

// utf8BOM is the UTF-8 byte-order mark.
var utf8BOM = []byte("\xef\xbb\xbf")

// trimBOM drops one UTF-8 byte-order mark at the start of a body, as the
// original's json.loads of the body's bytes does (protocol.md §2.5 step 5).
func trimBOM(body []byte) []byte { return bytes.TrimPrefix(body, utf8BOM) }

// reserve takes n bytes of the body budget, waiting at most BodyTimeout
// (then os.ErrDeadlineExceeded: 408 REQUEST_TIMEOUT, as for a body that
// does not arrive), and returns the function that gives them back. A body
// larger than the whole budget takes all of it, so it still passes alone.
// Without the budget many large bodies at once would each be read whole
// into memory.
func (h *Handler) reserve(ctx context.Context, n int64) (func(), error) {
	if h.bodies == nil || n <= 0 {
		return noRelease, nil
	}
	n = min(n, h.opts.BodyBudget)
	if !h.bodies.TryAcquire(n) {
		ctx, cancel := context.WithTimeout(ctx, h.opts.BodyTimeout)
		defer cancel()
		if err := h.bodies.Acquire(ctx, n); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, os.ErrDeadlineExceeded
			}
			return nil, err
		}
	}
	h.bodyHeld.Add(n)
	var once sync.Once
	return func() {
		once.Do(func() {
			h.bodyHeld.Add(-n)
			h.bodies.Release(n)
		})
	}, nil
}

// admitBody runs the checks POST / and the cancel route share, in order:
// bearer authentication, the JSON media type, and the body limit
// (protocol.md §2.5 steps 2–4, §7.1); the body comes without a leading
// byte-order mark. It answers the error itself and returns ok false.
// invalidJSON is the route's message for a body that ended early. The
// caller calls release once it is done with the body (it is a no-op when
// ok is false).
func (h *Handler) admitBody(w http.ResponseWriter, r *http.Request, lang i18n.Lang, limit int64, tooLarge, invalidJSON string) (body []byte, release func(), ok bool) {
	if !h.authorized(r) {
		writeError(w, lang, http.StatusUnauthorized, "UNAUTHORIZED", i18n.MsgUnauthorized)
		return nil, noRelease, false
	}
	if !jsonMediaType(r) {
		writeError(w, lang, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", i18n.MsgUnsupportedMediaType)
		return nil, noRelease, false
	}
	body, release, err := h.readBody(w, r, limit)
	switch {
	case err == nil:
		return trimBOM(body), release, true
	case errors.Is(err, errTooLarge):
		writeError(w, lang, http.StatusRequestEntityTooLarge, "REQUEST_TOO_LARGE", tooLarge)
	case errors.Is(err, os.ErrDeadlineExceeded):
		// Ours: the original waits forever. An empty 200 would tell a
		// client that a request never admitted had succeeded.
		writeError(w, lang, http.StatusRequestTimeout, "REQUEST_TIMEOUT", i18n.MsgRequestTimeout)
	default:
		// The body ended before its announced length (or the client
		// went away, and nobody reads this).
		writeError(w, lang, http.StatusBadRequest, "INVALID_JSON", invalidJSON)
	}
	return nil, noRelease, false
}

// guardBody makes every response to a request whose body was not read to
// its end close the connection. Without it net/http, to reuse the
// connection, first drains up to 256 KiB of the unread body before it
// sends the response: a client announcing a body it never sends would
// hold the connection and never see its 401.
func guardBody(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return w, r
	}
	b := &trackedBody{ReadCloser: r.Body}
	r2 := *r
	r2.Body = b
	return &closeIfUnread{ResponseWriter: w, body: b}, &r2
}

// trackedBody records whether its reader reached the end.
type trackedBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// closeIfUnread adds "Connection: close" to a response sent while the
// request body is unread.
type closeIfUnread struct {
	http.ResponseWriter
	body        *trackedBody
	wroteHeader bool
}

func (w *closeIfUnread) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 {
		w.wroteHeader = true
		if !w.body.eof.Load() {
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *closeIfUnread) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach Flush and the deadlines.
func (w *closeIfUnread) Unwrap() http.ResponseWriter { return w.ResponseWriter }
