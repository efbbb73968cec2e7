package server

import (
	"net/http"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// Metrics is what the server needs from the metrics package: a counter of
// answered requests, two gauges and the handler of GET /metrics. An
// interface, so the server does not depend on a metrics library.
type Metrics interface {
	// ObserveHTTP counts one answered request by route ("run", "cancel",
	// "health", "metrics" or "other") and status.
	ObserveHTTP(route string, status int)
	Handler() http.Handler
	// ServerGauges registers gauges read when scraped: the open streams
	// and the request body bytes held (New calls it once).
	ServerGauges(openStreams, bodyBytes func() float64)
}

// routeOf maps the pattern the mux matched to a bounded route label; an
// unmatched request (404, 405) has no pattern.
func routeOf(pattern string) string {
	switch pattern {
	case patternRun:
		return "run"
	case patternCancel:
		return "cancel"
	case patternSubscribe:
		return "subscribe"
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
