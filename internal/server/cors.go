package server

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/reqid"
)

// corsAllowHeaders are the request headers an AG-UI client sends: the body
// type, the bearer token, the SSE Accept, the language, trace context and
// the request id.
const corsAllowHeaders = "Content-Type, Authorization, Accept, Accept-Language, traceparent, tracestate, X-Request-Id"

// corsMaxAge lets a browser keep a preflight's answer for ten minutes
// rather than send one before every run.
const corsMaxAge = "600"

// cors grants a listed origin (Options.CORSOrigins) its answers: a
// preflight is answered here, 204 with what the route accepts; any other
// request gets Access-Control-Allow-Origin and sees X-Request-Id. A
// preflight from any other origin is refused with 403 and no CORS header.
// No Access-Control-Allow-Credentials is ever sent: the server reads no
// cookie, and a bearer token needs no credentials mode. It reports whether
// it answered r.
func (h *Handler) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	if !h.hosts.origins[strings.ToLower(origin)] {
		if preflight {
			h.refuse(w, r, CodeOriginNotAllowed, i18n.MsgOriginNotAllowed, slog.String("origin", clip(origin)))
			return true
		}
		return false
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", origin)
	if !preflight {
		hd.Set("Access-Control-Expose-Headers", reqid.Header)
		return false
	}
	hd.Set("Access-Control-Allow-Methods", corsMethods(r.URL.Path))
	hd.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	hd.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
	return true
}

// corsMethods is what a route accepts: GET for the status routes, POST
// for the AG-UI endpoint and the extension routes.
func corsMethods(path string) string {
	if path == "/health" || path == "/metrics" {
		return http.MethodGet
	}
	return http.MethodPost
}
