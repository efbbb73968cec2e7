package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func get(t *testing.T, url string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	// Redirects are what we assert, so do not follow them.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// A browser opening the server's address lands on the console; the page
// and its assets load without the bearer token even when one is set.
func TestConsoleRoutes(t *testing.T) {
	e := newEnv(t, envOptions{authToken: "secret"})
	res, _ := get(t, e.URL, map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/console" {
		t.Fatalf("browser GET / = %d %q, want 302 to /console", res.StatusCode, res.Header.Get("Location"))
	}
	for _, p := range []string{"console", "console/", "console/js/app.js", "console/console.css"} {
		res, body := get(t, e.URL+p, nil)
		if res.StatusCode != http.StatusOK || body == "" {
			t.Fatalf("GET /%s = %d without the token", p, res.StatusCode)
		}
	}
	// The page needs no token, but the API still does.
	r := post(t, e.URL, e.body("t-console", "r1", "hello", nil), nil)
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("POST / without token = %d, want 401", r.Status)
	}
}

// Clients that do not ask for HTML keep the 405 that GET / always had.
func TestRootWithoutHTMLStays405(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, accept := range []string{"", "application/json", "text/event-stream", "text/html;q=0"} {
		res, body := get(t, e.URL, map[string]string{"Accept": accept})
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "POST" || !strings.HasPrefix(body, "Method Not Allowed") {
			t.Fatalf("GET / Accept %q = %d Allow %q body %q", accept, res.StatusCode, res.Header.Get("Allow"), body)
		}
	}
}

// The console's workspace-roots route lists the allowed roots, behind the
// bearer token like the API: the roots are server paths.
func TestConsoleWorkspaceRoots(t *testing.T) {
	e := newEnv(t, envOptions{authToken: "secret"})
	res, body := get(t, e.URL+"console/workspace-roots", map[string]string{"Accept-Language": "es"})
	if res.StatusCode != http.StatusUnauthorized || strings.TrimSpace(body) != `{"error":{"code":"UNAUTHORIZED","message":"Se requiere un token bearer válido."}}` {
		t.Fatalf("without the token: %d %s", res.StatusCode, body)
	}
	res, body = get(t, e.URL+"console/workspace-roots", map[string]string{"Authorization": "Bearer secret"})
	want, _ := json.Marshal(map[string][]string{"allowedRoots": {e.Root}})
	if res.StatusCode != http.StatusOK || strings.TrimSpace(body) != string(want) || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("with the token: %d %s %q, want %s", res.StatusCode, body, res.Header.Get("Cache-Control"), want)
	}
}
