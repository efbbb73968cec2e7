package console

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

func serve(method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

func TestServesPageAndModules(t *testing.T) {
	for path, ctype := range map[string]string{
		"/console":               "text/html",
		"/console/":              "text/html",
		"/console/console.css":   "text/css",
		"/console/js/app.js":     "javascript",
		"/console/js/forms.js":   "javascript",
		"/console/js/render.js":  "javascript",
		"/console/js/i18n.js":    "javascript",
		"/console/messages.json": "application/json",
	} {
		rec := serve(http.MethodGet, path)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Type"), ctype) || rec.Body.Len() == 0 {
			t.Fatalf("%s: %d %q", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		if got := rec.Header().Get("Content-Security-Policy"); !strings.Contains(got, "connect-src 'self'") || !strings.Contains(got, "default-src 'none'") {
			t.Fatalf("%s: CSP %q", path, got)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: no nosniff", path)
		}
	}
	if rec := serve(http.MethodHead, "/console"); rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Fatalf("HEAD: %d, %d bytes", rec.Code, rec.Body.Len())
	}
}

func TestUnknownAndEscapingPathsAre404(t *testing.T) {
	for _, p := range []string{"/console/nope.js", "/console/../go.mod", "/console/js/../../console.go", "/console/.hidden", "/console/js"} {
		if rec := serve(http.MethodGet, p); rec.Code != http.StatusNotFound {
			t.Fatalf("%s: %d, want 404", p, rec.Code)
		}
	}
}

// The page must not pull anything from elsewhere: every script and
// stylesheet reference in index.html is a path on this server.
func TestPageReferencesOnlyItsOrigin(t *testing.T) {
	body := serve(http.MethodGet, "/console").Body.String()
	refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(body, -1)
	if len(refs) < 3 {
		t.Fatalf("only %d references", len(refs))
	}
	for _, m := range refs {
		if !strings.HasPrefix(m[1], "/console/") && !strings.HasPrefix(m[1], "data:") && !strings.HasPrefix(m[1], "#") {
			t.Fatalf("index.html references %q", m[1])
		}
	}
	// Inline scripts and styles would need a weaker CSP.
	for _, bad := range []string{"<script>", "style="} {
		if strings.Contains(body, bad) {
			t.Fatalf("index.html contains %q", bad)
		}
	}
}

func TestWantsHTML(t *testing.T) {
	for accept, want := range map[string]bool{
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": true,
		"TEXT/HTML":         true,
		"text/html;q=0.5":   true,
		"text/html;q=0":     false,
		"text/html;q=0.000": false,
		"application/json":  false,
		"text/event-stream": false,
		"*/*":               false,
		"":                  false,
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Accept", accept)
		if got := WantsHTML(r); got != want {
			t.Errorf("WantsHTML(%q) = %v, want %v", accept, got, want)
		}
	}
}

// The console's own labels (assets/messages.json) exist in every language
// the server speaks, each with every English key, the same {placeholders}
// and some text; every key index.html names is there; the English labels
// spell "cancelled" one way, as the server's codes and statuses do.
func TestMessagesCoverEveryLanguage(t *testing.T) {
	rec := serve(http.MethodGet, "/console/messages.json")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("messages.json: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var all map[string]map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &all); err != nil {
		t.Fatal(err)
	}
	if len(all) != len(i18n.Supported()) {
		t.Fatalf("%d languages, want %v", len(all), i18n.Supported())
	}
	en := all["en"]
	if len(en) < 100 {
		t.Fatalf("only %d English labels", len(en))
	}
	holes := regexp.MustCompile(`\{\w+\}`)
	for _, lang := range i18n.Supported() {
		msgs, ok := all[string(lang)]
		if !ok {
			t.Fatalf("no labels for %s", lang)
		}
		for key, want := range en {
			got, ok := msgs[key]
			if !ok || strings.TrimSpace(got) == "" {
				t.Errorf("%s: %q missing", lang, key)
				continue
			}
			if w, g := holes.FindAllString(want, -1), holes.FindAllString(got, -1); strings.Join(sorted(w), ",") != strings.Join(sorted(g), ",") {
				t.Errorf("%s: %q has placeholders %v, English %v", lang, key, g, w)
			}
		}
		if len(msgs) != len(en) {
			t.Errorf("%s has %d labels, English %d", lang, len(msgs), len(en))
		}
	}
	page := serve(http.MethodGet, "/console").Body.String()
	for _, m := range regexp.MustCompile(`data-i18n(?:-[\w-]+)?="([\w.]+)"`).FindAllStringSubmatch(page, -1) {
		if _, ok := en[m[1]]; !ok {
			t.Errorf("index.html names %q, which messages.json does not have", m[1])
		}
	}
	for key, s := range en {
		if strings.Contains(strings.ToLower(s), "canceled") {
			t.Errorf("%q spells canceled: %q", key, s)
		}
	}
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	slices.Sort(s)
	return s
}
