package server

import (
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/console"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"golang.org/x/sync/semaphore"
)

// Limits of the HTTP surface (protocol.md §11).
const (
	maxRunBody    = 12 << 20
	maxCancelBody = 64 << 10
)

// Default connection timeouts (Timeouts' zero values).
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultIdleTimeout       = 120 * time.Second
	defaultBodyTimeout       = 60 * time.Second
	defaultStreamWrite       = 60 * time.Second
)

// Options configures the handler.
type Options struct {
	Adapter *adapter.Adapter
	// AuthToken protects POST / and the cancel route; empty disables auth.
	AuthToken string
	// Version is the product version reported by /health.
	Version string
	// Heartbeat is the SSE idle interval (15 s when zero).
	Heartbeat time.Duration
	Logger    *slog.Logger
	// Metrics, when set, serves GET /metrics and counts every answered
	// request; nil means neither.
	Metrics Metrics
	// Cluster, when set, lets several replicas serve the same threads:
	// requests of a thread another replica owns are forwarded to it.
	Cluster Cluster
	// BodyTimeout bounds how long a request may take, from the moment its
	// handler starts, to deliver its body (60 s when zero). It is lifted
	// once the body is read, so that long SSE responses are never cut.
	BodyTimeout time.Duration
	// BodyBudget bounds the bytes of request bodies read and decoded at
	// once (body.go): a request whose body does not fit waits, at most
	// BodyTimeout. Zero means 256 MiB; a negative value, no bound.
	BodyBudget int64
	// StreamWriteTimeout bounds how long a client may take to accept one
	// write of its stream (an event or a heartbeat): a client that stops
	// reading is disconnected after it (60 s when zero; protocol.md §4.1).
	StreamWriteTimeout time.Duration
	// AllowedHosts are the Host names and addresses served besides
	// loopback; ListenAll allows any IP literal (the server listens on all
	// interfaces); CORSOrigins may call from a browser (hosts.go, cors.go).
	AllowedHosts []string
	ListenAll    bool
	CORSOrigins  []string
	// Upstream names the agent behind the server for /health: "demo",
	// "managed" or "url" ("" leaves the member out).
	Upstream string
	// Handoff is A2A's session-handoff service behind the handoff routes
	// (handoff.go); nil answers them as A2A's 404 would.
	Handoff HandoffUpstream
}

// Route patterns; the request counter labels requests by them.
const (
	patternHealth = "GET /health"
	patternRun    = "POST /{$}"
	patternCancel = "POST /extensions/iac-code/v1/executions/{executionId}/cancel"
	// patternSubscribe observes an execution read-only (protocol.md §7.2).
	patternSubscribe = "POST /extensions/iac-code/v1/executions/{executionId}/subscribe"
	patternMetrics   = "GET /metrics"
	patternRoot      = "GET /{$}"
)

// Handler serves the adapter's routes.
type Handler struct {
	opts Options
	mux  *http.ServeMux
	log  *slog.Logger
	// streams counts the open run and observation streams (run.go).
	streams atomic.Int64
	// hosts decides the Host and Origin checks and CORS (hosts.go).
	hosts hostPolicy
	// bodies is the body budget (body.go); nil for none. bodyHeld is
	// what requests hold of it.
	bodies   *semaphore.Weighted
	bodyHeld atomic.Int64
}

// New returns the adapter's HTTP handler.
func New(o Options) *Handler {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.BodyTimeout == 0 {
		o.BodyTimeout = defaultBodyTimeout
	}
	if o.BodyBudget == 0 {
		o.BodyBudget = defaultBodyBudget
	}
	if o.StreamWriteTimeout <= 0 {
		o.StreamWriteTimeout = defaultStreamWrite
	}
	h := &Handler{opts: o, mux: http.NewServeMux(), log: o.Logger, hosts: newHostPolicy(o)}
	if o.BodyBudget > 0 {
		h.bodies = semaphore.NewWeighted(o.BodyBudget)
	}
	h.mux.HandleFunc(patternHealth, h.health)
	h.mux.HandleFunc(patternRun, h.run)
	h.mux.HandleFunc(patternCancel, h.cancel)
	h.mux.HandleFunc(patternSubscribe, h.subscribe)
	h.mux.HandleFunc(patternHandoff, h.handoff)
	if o.Metrics != nil {
		h.mux.HandleFunc(patternMetrics, h.metrics)
		o.Metrics.ServerGauges(
			func() float64 { return float64(h.streams.Load()) },
			func() float64 { return float64(h.bodyHeld.Load()) })
	}
	// The browser console: public static files, no token needed to load it.
	h.mux.Handle("GET "+console.Path, console.Handler())
	h.mux.Handle("GET "+console.Path+"/", console.Handler())
	h.mux.HandleFunc(patternConsoleRoots, h.consoleRoots)
	h.mux.HandleFunc(patternRoot, root)
	return h
}

// ServeHTTP serves r through the request-id and access-log layer
// (accesslog.go).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// No request may hold its connection unboundedly before it is
	// authenticated and admitted: the deadline covers a body that is
	// announced and never sent, on every route (readBody lifts it once the
	// body is in).
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.opts.BodyTimeout))
	// A keep-alive connection keeps the write deadline its previous
	// stream left (agui.Writer): this response starts without one.
	_ = rc.SetWriteDeadline(time.Time{})
	w, r = guardBody(w, r)
	h.serveLogged(w, r)
}

// serveChecked applies the Host and Origin checks and CORS (hosts.go,
// cors.go) before the routes.
func (h *Handler) serveChecked(w http.ResponseWriter, r *http.Request) {
	if len(h.hosts.origins) > 0 {
		// Answers differ by Origin, for caches too.
		w.Header().Add("Vary", "Origin")
	}
	if h.checkHostOrigin(w, r) && !h.cors(w, r) {
		h.mux.ServeHTTP(w, r)
	}
}

// Timeouts are the connection timeouts of NewHTTPServer; zero fields take
// the defaults (10 s to read headers, 120 s idle between requests).
type Timeouts struct {
	ReadHeader time.Duration
	Idle       time.Duration
}

// SpanName names a request's trace span by the route it matches ("POST /",
// "POST /extensions/iac-code/v1/executions/{executionId}/cancel"), never
// by its path.
func (h *Handler) SpanName(r *http.Request) string {
	_, pattern := h.mux.Handler(r)
	if pattern == "" {
		return r.Method
	}
	if !strings.Contains(pattern, " ") {
		pattern = r.Method + " " + pattern // a pattern for every method
	}
	return strings.Replace(pattern, "{$}", "", 1)
}

// Traced reports whether a request gets a trace span: not the probes and
// scrapes (/health, /metrics), which would each be a trace of their own,
// and not a request of no route, whose path (recorded as url.path) may
// hold anything, as the access log never shows it either.
func (h *Handler) Traced(r *http.Request) bool {
	if r.URL.Path == "/health" || r.URL.Path == "/metrics" {
		return false
	}
	_, pattern := h.mux.Handler(r)
	return pattern != ""
}

// NewHTTPServer wraps a handler with timeouts that stop slow-header clients
// without ever cutting a long SSE stream: there is no WriteTimeout (a
// stream bounds each of its writes instead, Options.StreamWriteTimeout),
// and the body read deadline is set per request by the Handler.
func NewHTTPServer(addr string, h http.Handler, t Timeouts) *http.Server {
	if t.ReadHeader == 0 {
		t.ReadHeader = defaultReadHeaderTimeout
	}
	if t.Idle == 0 {
		t.Idle = defaultIdleTimeout
	}
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    64 << 10,
	}
}

func (h *Handler) health(w http.ResponseWriter, _ *http.Request) {
	body := map[string]string{
		"status":                 "ok",
		"protocol":               "ag-ui",
		"protocolPackageVersion": "1.0",
		"executionKernel":        "a2a-1.0",
		"serverVersion":          h.opts.Version,
	}
	if h.opts.Upstream != "" {
		body["upstream"] = h.opts.Upstream
	}
	writeJSON(w, http.StatusOK, body)
}

// root sends a browser that opens the server's address to the console.
// Any other GET / keeps the 405 it got before the console existed, with a
// line saying what to do instead (someone trying curl on the address).
func root(w http.ResponseWriter, r *http.Request) {
	if console.WantsHTML(r) {
		http.Redirect(w, r, console.Path, http.StatusFound)
		return
	}
	w.Header().Set("Allow", http.MethodPost)
	http.Error(w, http.StatusText(http.StatusMethodNotAllowed)+
		": POST an AG-UI RunAgentInput here (text/event-stream answer); GET /health for status; open "+console.Path+" in a browser.",
		http.StatusMethodNotAllowed)
}

// authorized checks the bearer token in constant time (protocol.md §2.3).
func (h *Handler) authorized(r *http.Request) bool {
	want := h.opts.AuthToken
	if want == "" {
		return true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(token), []byte(want)) == 1
}

// authorizedExact compares the whole Authorization header with
// "Bearer " + token in constant time: the scheme's letter case counts, as
// on the original's subscribe and handoff routes (protocol.md §2.3).
func (h *Handler) authorizedExact(r *http.Request) bool {
	want := h.opts.AuthToken
	if want == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+want)) == 1
}

// jsonMediaType reports whether Content-Type's media type is
// application/json (the part before ";", lowercased).
func jsonMediaType(r *http.Request) bool {
	mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.ToLower(strings.TrimSpace(mt)) == "application/json"
}

// requestLang is the language of the Accept-Language header (§2.9).
func requestLang(r *http.Request) i18n.Lang {
	return i18n.FromAcceptLanguage(r.Header.Get("Accept-Language"))
}
