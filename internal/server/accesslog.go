package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/reqid"
)

// serveLogged gives r its request id (the client's X-Request-Id when
// sane, else a fresh one), echoes it in the response, carries it in the
// request context (the adapter logs it, the A2A client sends it upstream),
// serves r, then counts the answer and writes one access-log line.
//
// The line holds the method, the route label, the status, the error code
// of a refusal (protocol.md §2.4), the duration and the response body
// size: never the path of an unknown route, the query,
// headers or either body, which may hold tokens or message text.
func (h *Handler) serveLogged(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	r, id := withRequestID(w, r)
	sw := &statusWriter{ResponseWriter: w, id: id, start: start}
	h.serveChecked(sw, r)
	status := sw.status
	if status == 0 {
		status = http.StatusOK // the handler wrote nothing: net/http sends 200
	}
	h.logAccess(newAccessEntry(r, sw), status, sw.bytes, sw.code)
}

// withRequestID gives r its id and echoes it in the response; apart from
// serveLogged for the same reason as logAccess.
//
//go:noinline
func withRequestID(w http.ResponseWriter, r *http.Request) (*http.Request, string) {
	id := reqid.FromClient(r.Header.Get(reqid.Header))
	w.Header().Set(reqid.Header, id)
	return r.WithContext(reqid.With(r.Context(), id)), id
}

// accessEntry is what an access-log line tells of a request besides its
// answer.
type accessEntry struct {
	ctx                       context.Context // carries the request id for the log handler
	id, method, route, remote string
	start                     time.Time
}

// newAccessEntry reads r after the mux matched it (the mux records the
// pattern on r, so the route costs no second lookup); w is the request's
// statusWriter.
func newAccessEntry(r *http.Request, w *statusWriter) accessEntry {
	return accessEntry{ctx: r.Context(), id: w.id, method: r.Method, route: routeOf(r.Pattern), remote: r.RemoteAddr, start: w.start}
}

// logAccess is apart from serveLogged so that its attributes' 700 bytes
// of stack are not held under every open stream's handler (a handler
// stack that reaches 8 KiB doubles and never shrinks back).
//
//go:noinline
func (h *Handler) logAccess(e accessEntry, status int, bytes int64, code string) {
	if h.opts.Metrics != nil {
		h.opts.Metrics.ObserveHTTP(e.route, status)
	}
	attrs := [...]slog.Attr{
		slog.String("requestId", e.id),
		slog.String("method", e.method),
		slog.String("route", e.route),
		slog.Int("status", status),
		slog.Float64("durationMs", float64(time.Since(e.start).Microseconds())/1000),
		slog.Int64("bytes", bytes),
		slog.String("remote", e.remote),
		slog.String("code", code),
	}
	list := attrs[:]
	if code == "" {
		// Only a refusal has a code: other lines stay as they were.
		list = attrs[:len(attrs)-1]
	}
	h.log.LogAttrs(e.ctx, slog.LevelInfo, "http request", list...)
}

// statusWriter remembers the status and body size of a response. It adds
// no method of its own beyond Unwrap, so http.ResponseController still
// reaches the connection's Flush and deadlines (SSE, body timeouts).
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	code   string // the error envelope's code, for the access line
	id     string
	start  time.Time
}

// noteErrorCode tells the request's statusWriter, under any wrapper that
// unwraps to it, the code of the error envelope being written.
func noteErrorCode(w http.ResponseWriter, code string) {
	for {
		if sw, ok := w.(*statusWriter); ok {
			sw.code = code
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

func (w *statusWriter) WriteHeader(code int) {
	// 1xx responses are interim; the final status comes later.
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController find the wrapped writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
