package request

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/iac-code-agui/iac-code-agui/internal/pypath"
)

// Roots are the allowed workspace roots (protocol.md §3.4 step 3). An entry
// that is an existing directory at start-up is resolved once; one that is
// not (yet) is resolved again whenever a workspace falls outside the
// resolved roots, so a root created after start-up is honoured without a
// restart, and an admission inside a resolved root costs no system call.
type Roots struct {
	mu       sync.Mutex
	resolved []string
	waiting  []string // absolute entries that were not existing directories
}

// AllowedRoots resolves the allowed workspace roots. With no configured
// entries the roots are the current directory and os.TempDir(). Each entry
// is expanded (~), made absolute, resolved with symlinks followed, and used
// only while it is an existing directory; empty entries are skipped.
func AllowedRoots(configured []string) *Roots {
	candidates := configured
	if len(configured) == 0 {
		candidates = []string{".", os.TempDir()}
	}
	r := &Roots{}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		p, err := filepath.Abs(pypath.ExpandUser(c, os.LookupEnv))
		if err != nil {
			continue
		}
		if dir, ok := resolveRoot(p); ok {
			r.resolved = append(r.resolved, dir)
		} else {
			r.waiting = append(r.waiting, p)
		}
	}
	return r
}

// resolveRoot resolves p, following symlinks, when it is an existing
// directory.
func resolveRoot(p string) (string, bool) {
	r, err := realpath(p)
	if err != nil {
		return "", false
	}
	if fi, err := os.Stat(r); err == nil && fi.IsDir() {
		return r, true
	}
	return "", false
}

// List returns the resolved roots.
func (r *Roots) List() []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.resolved...)
}

// contains reports whether the resolved path p is inside a root. Only when
// it is not are the waiting entries resolved again.
func (r *Roots) contains(p string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, root := range r.resolved {
		if within(p, root) {
			return true
		}
	}
	if len(r.waiting) == 0 {
		return false
	}
	still := r.waiting[:0]
	found := false
	for _, w := range r.waiting {
		dir, ok := resolveRoot(w)
		if !ok {
			still = append(still, w)
			continue
		}
		r.resolved = append(r.resolved, dir)
		found = found || within(p, dir)
	}
	r.waiting = still
	return found
}
