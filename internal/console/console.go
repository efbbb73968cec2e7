package console

import (
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assets embed.FS

// Path is where the console lives; its files are under Path + "/".
const Path = "/console"

// csp keeps every request of the page on its own origin: scripts, styles,
// fetches and images (data: only for inline icons). The console sends
// nothing anywhere but the adapter that served it.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves GET /console (the page) and GET /console/<file> (its
// assets). It never asks for authentication: the page holds no data.
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return &handler{files: sub}
}

type handler struct {
	files fs.FS
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, Path)
	switch name {
	case "", "/":
		name = "index.html"
	default:
		name = strings.TrimPrefix(path.Clean(name), "/")
	}
	if strings.HasPrefix(name, ".") || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	data, err := fs.ReadFile(h.files, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	hdr.Set("Content-Type", ctype)
	hdr.Set("Content-Security-Policy", csp)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	// The assets change with the binary; revalidating on each load keeps
	// a browser from mixing modules of two versions.
	hdr.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
}

// WantsHTML reports whether a request comes from a browser navigating to a
// page: its Accept header lists text/html.
func WantsHTML(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, _ := strings.Cut(part, ";")
		if strings.EqualFold(strings.TrimSpace(mt), "text/html") && !zeroQ(params) {
			return true
		}
	}
	return false
}

// zeroQ reports a q=0 parameter, which means "not acceptable".
func zeroQ(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(k, "q") {
			v = strings.TrimRight(strings.TrimSpace(v), "0")
			return v == "" || v == "." || v == "0" || v == "0."
		}
	}
	return false
}
