package server

import (
	"net/http"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// Metrics is what the server needs from the metrics package: a counter of
// answered requests and the handler of GET /metrics. An interface, so the
// server does not depend on a metrics library.
type Metrics interface {
	// ObserveHTTP counts one answered request by route ("run", "cancel",
	// "health", "metrics" or "other") and status.
	ObserveHTTP(route string, status int)
	Handler() http.Handler
}

// routeOf maps the pattern the mux matched to a bounded route label; an
// unmatched request (404, 405) has no pattern.
func routeOf(pattern string) string {
	switch pattern {
	case patternRun:
		return "run"
	case patternCancel:
		return "cancel"
	case patternHealth:
		return "health"
	case patternMetrics:
		return "metrics"
	}
	return "other"
}

// metrics serves GET /metrics. Metrics reveal activity, so they sit behind
// the same bearer token as POST / when one is configured.
func (h *Handler) metrics(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(r) {
		writeError(w, requestLang(r), http.StatusUnauthorized, "UNAUTHORIZED", i18n.MsgUnauthorized)
		return
	}
	h.opts.Metrics.Handler().ServeHTTP(w, r)
}

// statusWriter remembers the status of a response for the request counter.
// It adds no method of its own beyond Unwrap, so http.ResponseController
// still reaches the connection's Flush and deadlines (SSE, body timeouts).
type statusWriter struct {
	http.ResponseWriter
	status int
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
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController find the wrapped writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serveCounted serves r and counts its answer by route and status. The mux
// records the matched pattern on r, so the route costs no second lookup.
func (h *Handler) serveCounted(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	h.mux.ServeHTTP(sw, r)
	status := sw.status
	if status == 0 {
		status = http.StatusOK // the handler wrote nothing: net/http sends 200
	}
	h.opts.Metrics.ObserveHTTP(routeOf(r.Pattern), status)
}
