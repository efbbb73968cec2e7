package server

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/reqid"
)

// Codes of the Host and Origin refusals (403, before anything else).
const (
	CodeHostNotAllowed   = "HOST_NOT_ALLOWED"
	CodeOriginNotAllowed = "ORIGIN_NOT_ALLOWED"
)

// hostPolicy says which Host and Origin headers a request may carry. A
// DNS-rebinding page reaches a loopback server under the attacker's own
// name, so the Host must be one the server is known by; a cross-site page
// sends its Origin, which must be the server's own or one listed for CORS.
type hostPolicy struct {
	names   map[string]bool // allowed besides loopback: lowercased, no brackets
	anyIP   bool            // the server listens on all interfaces: any IP literal
	origins map[string]bool // the CORS origins, as browsers serialise them
}

func newHostPolicy(o Options) hostPolicy {
	p := hostPolicy{names: map[string]bool{}, anyIP: o.ListenAll, origins: map[string]bool{}}
	for _, n := range o.AllowedHosts {
		if n = hostName(n); n != "" {
			p.names[n] = true
		}
	}
	for _, s := range o.CORSOrigins {
		p.origins[strings.ToLower(s)] = true
	}
	return p
}

// hostName is the host part of a Host header (or an allowed-hosts entry):
// lowercased, without port, brackets or a trailing dot.
func hostName(hostport string) string {
	h := strings.ToLower(strings.TrimSpace(hostport))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return strings.TrimSuffix(h, ".")
}

// hostAllowed: localhost, a loopback address, any IP literal when the
// server listens on all interfaces (an IP literal cannot be rebound), or a
// configured name.
func (p hostPolicy) hostAllowed(hostport string) bool {
	h := hostName(hostport)
	switch {
	case h == "":
		return false
	case h == "localhost":
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Unmap().IsLoopback() || p.anyIP {
			return true
		}
		h = a.String()
	}
	return p.names[h]
}

// originAllowed: the request's own origin (the Origin's host[:port] is the
// Host) or a listed CORS origin. "null" and anything unparsable are
// refused.
func (p hostPolicy) originAllowed(origin, host string) bool {
	origin = strings.ToLower(origin)
	if p.origins[origin] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	host = strings.ToLower(host)
	if u.Host == host {
		return true
	}
	// Browsers leave the scheme's default port out of Origin; a client may
	// still write it in Host.
	if u.Port() == "" {
		def := "80"
		if u.Scheme == "https" {
			def = "443"
		}
		return host == u.Host+":"+def
	}
	return false
}

// checkHostOrigin refuses, with 403 and nothing passed on, a request whose
// Host or Origin the policy does not allow; /health is exempt, so probes
// of any name keep working. It reports whether r may go on.
func (h *Handler) checkHostOrigin(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path == "/health" {
		return true
	}
	if !h.hosts.hostAllowed(r.Host) {
		h.refuse(w, r, CodeHostNotAllowed, i18n.MsgHostNotAllowed, slog.String("host", clip(r.Host)))
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && !h.hosts.originAllowed(o, r.Host) {
		h.refuse(w, r, CodeOriginNotAllowed, i18n.MsgOriginNotAllowed, slog.String("origin", clip(o)))
		return false
	}
	return true
}

// refuse answers 403 with code and logs why, with the request id; the
// access line gets the route the request was meant for.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, code, msg string, what slog.Attr) {
	_, r.Pattern = h.mux.Handler(r)
	h.log.LogAttrs(r.Context(), slog.LevelWarn, "AG-UI request refused",
		slog.String("requestId", reqid.From(r.Context())), slog.String("code", code), what)
	writeRefusal(w, r, requestLang(r), http.StatusForbidden, code, msg)
}

// clip bounds a header value copied into the log.
func clip(s string) string {
	if len(s) > 128 {
		return s[:128] + "…"
	}
	return s
}
