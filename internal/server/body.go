package server

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// errTooLarge reports a body over its limit, by header or while reading.
var errTooLarge = errors.New("request body too large")

// readBody reads at most limit bytes of the body, checking Content-Length
// first and counting while reading (protocol.md §2.5 step 4). The read
// deadline ServeHTTP set still applies; it is lifted when the body is in.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, errTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, errTooLarge
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return body, nil
}

// admitBody runs the checks both POST routes share, in order: bearer
// authentication, the JSON media type, and the body limit (protocol.md §2.5
// steps 2–4, §7.1). It answers the error itself and returns ok false.
// invalidJSON is the route's message for a body that ended early.
func (h *Handler) admitBody(w http.ResponseWriter, r *http.Request, lang i18n.Lang, limit int64, tooLarge, invalidJSON string) ([]byte, bool) {
	if !h.authorized(r) {
		writeError(w, lang, http.StatusUnauthorized, "UNAUTHORIZED", i18n.MsgUnauthorized)
		return nil, false
	}
	if !jsonMediaType(r) {
		writeError(w, lang, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", i18n.MsgUnsupportedMediaType)
		return nil, false
	}
	body, err := readBody(w, r, limit)
	switch {
	case err == nil:
		return body, true
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
	return nil, false
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
