package config

import (
	"path/filepath"

	"github.com/iac-code-agui/iac-code-agui/internal/pypath"
)

// expandPath expands environment variables, then "~", and returns the
// absolute, cleaned path (protocol.md §8.1). It does not follow symbolic links:
// the directory may not exist yet.
func expandPath(p string, getenv func(string) string) (string, error) {
	env := lookup(getenv)
	p = pypath.ExpandUser(pypath.ExpandVars(p, env), env)
	return filepath.Abs(p)
}

// lookup adapts getenv to pypath: a variable that is unset or empty (getenv
// cannot tell them apart) counts as unset and is left as written.
func lookup(getenv func(string) string) pypath.Lookup {
	return func(k string) (string, bool) {
		v := getenv(k)
		return v, v != ""
	}
}
