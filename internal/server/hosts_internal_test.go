package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHostDecisions is the Host check's table: loopback names and
// addresses always, IP literals only when listening on all interfaces,
// other names only when configured.
func TestHostDecisions(t *testing.T) {
	local := newHostPolicy(Options{})
	all := newHostPolicy(Options{ListenAll: true})
	named := newHostPolicy(Options{AllowedHosts: []string{"agui.example.com", "10.1.2.3", "[fd00::7]"}})
	for _, c := range []struct {
		host              string
		local, all, named bool
	}{
		{"localhost", true, true, true},
		{"localhost:8000", true, true, true},
		{"LOCALHOST:8000", true, true, true},
		{"localhost.:8000", true, true, true},
		{"127.0.0.1:8000", true, true, true},
		{"127.9.8.7", true, true, true},
		{"[::1]:8000", true, true, true},
		{"[::ffff:127.0.0.1]:8000", true, true, true},
		{"attacker.example:8000", false, false, false},
		{"localhost.attacker.example", false, false, false},
		{"127.0.0.1.nip.io:8000", false, false, false},
		{"192.168.1.20:8000", false, true, false},
		{"[fe80::1]:8000", false, true, false},
		{"agui.example.com", false, false, true},
		{"AGUI.example.com:443", false, false, true},
		{"sub.agui.example.com", false, false, false},
		{"10.1.2.3:8000", false, true, true},
		{"[fd00::7]:8000", false, true, true},
		{"", false, false, false},
	} {
		if got := local.hostAllowed(c.host); got != c.local {
			t.Errorf("loopback listener: hostAllowed(%q) = %v", c.host, got)
		}
		if got := all.hostAllowed(c.host); got != c.all {
			t.Errorf("all interfaces: hostAllowed(%q) = %v", c.host, got)
		}
		if got := named.hostAllowed(c.host); got != c.named {
			t.Errorf("named hosts: hostAllowed(%q) = %v", c.host, got)
		}
	}
}

// TestOriginDecisions is the Origin check's table: the request's own
// origin, scheme aside, or a listed CORS origin.
func TestOriginDecisions(t *testing.T) {
	p := newHostPolicy(Options{CORSOrigins: []string{"http://localhost:5173"}})
	for _, c := range []struct {
		origin, host string
		want         bool
	}{
		{"http://127.0.0.1:8000", "127.0.0.1:8000", true},
		{"https://127.0.0.1:8000", "127.0.0.1:8000", true},
		{"http://LOCALHOST:8000", "localhost:8000", true},
		{"https://agui.example.com", "agui.example.com", true},
		{"https://agui.example.com", "agui.example.com:443", true},
		{"http://agui.example.com", "agui.example.com:80", true},
		{"http://localhost:8000", "127.0.0.1:8000", false},
		{"http://127.0.0.1:8001", "127.0.0.1:8000", false},
		{"http://attacker.example:8000", "127.0.0.1:8000", false},
		{"http://attacker.example:8000", "localhost:8000", false},
		{"http://localhost:5173", "127.0.0.1:8000", true},
		{"http://LocalHost:5173", "127.0.0.1:8000", true},
		{"https://localhost:5173", "127.0.0.1:8000", false},
		{"http://localhost:5174", "127.0.0.1:8000", false},
		{"null", "127.0.0.1:8000", false},
		{"file://", "127.0.0.1:8000", false},
		{"127.0.0.1:8000", "127.0.0.1:8000", false},
	} {
		if got := p.originAllowed(c.origin, c.host); got != c.want {
			t.Errorf("originAllowed(%q, %q) = %v, want %v", c.origin, c.host, got, c.want)
		}
	}
}

// TestGuardAnswers checks the answers of the Host, Origin and CORS layer
// in front of the routes: refusals, preflights and the headers given to a
// listed origin. Only requests the layer answers itself, or /health, are
// sent: the handler has no adapter.
func TestGuardAnswers(t *testing.T) {
	h := New(Options{Version: "test", CORSOrigins: []string{"http://localhost:5173"}, Upstream: "demo"})
	type want struct {
		status int
		code   string
		acao   string
	}
	for _, c := range []struct {
		name, method, path, host string
		hdr                      map[string]string
		want                     want
	}{
		{"rebinding host", "POST", "/", "attacker.example:8000", nil, want{403, CodeHostNotAllowed, ""}},
		{"rebinding host, its own origin", "POST", "/", "attacker.example:8000",
			map[string]string{"Origin": "http://attacker.example:8000"}, want{403, CodeHostNotAllowed, ""}},
		{"cancel route too", "POST", "/extensions/iac-code/v1/executions/e-1/cancel", "attacker.example", nil, want{403, CodeHostNotAllowed, ""}},
		{"console too", "GET", "/console/", "attacker.example", nil, want{403, CodeHostNotAllowed, ""}},
		{"metrics too", "GET", "/metrics", "attacker.example", nil, want{403, CodeHostNotAllowed, ""}},
		{"cross-site origin, loopback host", "POST", "/", "127.0.0.1:8000",
			map[string]string{"Origin": "http://attacker.example"}, want{403, CodeOriginNotAllowed, ""}},
		{"null origin", "POST", "/", "127.0.0.1:8000", map[string]string{"Origin": "null"}, want{403, CodeOriginNotAllowed, ""}},
		{"health, any host", "GET", "/health", "attacker.example", map[string]string{"Origin": "http://attacker.example"}, want{200, "", ""}},
		{"health, listed origin", "GET", "/health", "127.0.0.1:8000", map[string]string{"Origin": "http://localhost:5173"},
			want{200, "", "http://localhost:5173"}},
		{"preflight, listed origin", "OPTIONS", "/", "127.0.0.1:8000",
			map[string]string{"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST",
				"Access-Control-Request-Headers": "content-type,authorization"}, want{204, "", "http://localhost:5173"}},
		{"preflight, unlisted origin", "OPTIONS", "/", "127.0.0.1:8000",
			map[string]string{"Origin": "http://localhost:5174", "Access-Control-Request-Method": "POST"}, want{403, CodeOriginNotAllowed, ""}},
		{"preflight of health, unlisted origin", "OPTIONS", "/health", "127.0.0.1:8000",
			map[string]string{"Origin": "http://attacker.example", "Access-Control-Request-Method": "GET"}, want{403, CodeOriginNotAllowed, ""}},
		{"preflight, rebinding host", "OPTIONS", "/", "attacker.example",
			map[string]string{"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"}, want{403, CodeHostNotAllowed, ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.path, nil)
			r.Host = c.host
			for k, v := range c.hdr {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.want.status {
				t.Fatalf("status %d, want %d; body %s", w.Code, c.want.status, w.Body)
			}
			if got := w.Header().Get("Access-Control-Allow-Origin"); got != c.want.acao {
				t.Fatalf("Access-Control-Allow-Origin %q, want %q", got, c.want.acao)
			}
			if c.want.acao == "" {
				for k := range w.Header() {
					if len(k) > 15 && k[:15] == "Access-Control-" {
						t.Fatalf("CORS header %s on a refusal", k)
					}
				}
			}
			if c.want.code != "" {
				var body errorBody
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code != c.want.code || body.Error.Message == "" {
					t.Fatalf("body %s (%v), want code %s", w.Body, err, c.want.code)
				}
			}
			if got := w.Header().Get("Vary"); got != "Origin" {
				t.Fatalf("Vary %q", got)
			}
		})
	}

	t.Run("preflight headers", func(t *testing.T) {
		for path, methods := range map[string]string{"/": "POST", "/extensions/iac-code/v1/executions/e-1/cancel": "POST", "/health": "GET", "/metrics": "GET"} {
			r := httptest.NewRequest(http.MethodOptions, path, nil)
			r.Host = "127.0.0.1:8000"
			r.Header.Set("Origin", "http://localhost:5173")
			r.Header.Set("Access-Control-Request-Method", methods)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			hd := w.Header()
			if w.Code != http.StatusNoContent || hd.Get("Access-Control-Allow-Methods") != methods ||
				hd.Get("Access-Control-Allow-Headers") != "Content-Type, Authorization, Accept, Accept-Language, traceparent, tracestate, X-Request-Id" ||
				hd.Get("Access-Control-Max-Age") != "600" || hd.Get("Access-Control-Allow-Credentials") != "" || w.Body.Len() != 0 {
				t.Fatalf("%s: %d %v %q", path, w.Code, hd, w.Body)
			}
		}
	})

	t.Run("answer to a listed origin", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodGet, "/health", nil)
		r.Host = "127.0.0.1:8000"
		r.Header.Set("Origin", "http://localhost:5173")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var doc map[string]string
		_ = json.Unmarshal(w.Body.Bytes(), &doc)
		if hd := w.Header(); hd.Get("Access-Control-Expose-Headers") != "X-Request-Id" || hd.Get("Access-Control-Allow-Credentials") != "" ||
			doc["upstream"] != "demo" || doc["status"] != "ok" || len(doc) != 6 {
			t.Fatalf("%v %v", hd, doc)
		}
	})

	t.Run("no CORS list, no Vary", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodGet, "/health", nil)
		r.Host = "localhost"
		w := httptest.NewRecorder()
		New(Options{}).ServeHTTP(w, r)
		if w.Code != 200 || w.Header().Get("Vary") != "" {
			t.Fatalf("%d %v", w.Code, w.Header())
		}
	})
}
