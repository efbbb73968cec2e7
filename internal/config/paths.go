package config

import (
	"os/user"
	"path/filepath"
	"strings"
)

// expandPath expands environment variables, then "~", and returns the
// absolute, cleaned path (adapter.md §8.1). It does not follow symbolic links:
// the directory may not exist yet.
func expandPath(p string, getenv func(string) string) (string, error) {
	p = expandUser(expandVars(p, getenv), getenv)
	return filepath.Abs(p)
}

// expandVars replaces $NAME and ${NAME} like Python's os.path.expandvars: a
// variable that is unset (or empty, which getenv cannot tell apart) is left as
// written instead of becoming "".
func expandVars(s string, getenv func(string) string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' {
			b.WriteByte(s[i])
			i++
			continue
		}
		name, width := varName(s[i+1:])
		if name == "" {
			b.WriteByte('$')
			i++
			continue
		}
		if v := getenv(name); v != "" {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+1+width])
		}
		i += 1 + width
	}
	return b.String()
}

// varName reads a variable name after "$": either {NAME} or a run of
// letters, digits and underscores. width is the number of bytes consumed.
func varName(s string) (name string, width int) {
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s, '}')
		if end <= 1 {
			return "", 0
		}
		return s[1:end], end + 1
	}
	n := 0
	for n < len(s) && (s[n] == '_' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9') {
		n++
	}
	return s[:n], n
}

// expandUser replaces a leading "~" (HOME, else the account's home) or
// "~name" (that account's home); an unknown user is left unchanged.
func expandUser(p string, getenv func(string) string) string {
	if !strings.HasPrefix(p, "~") {
		return p
	}
	rest := p[1:]
	name := rest
	if i := strings.IndexAny(rest, `/`+string(filepath.Separator)); i >= 0 {
		name, rest = rest[:i], rest[i:]
	} else {
		rest = ""
	}
	var home string
	if name == "" {
		home = getenv("HOME")
		if home == "" {
			if u, err := user.Current(); err == nil {
				home = u.HomeDir
			}
		}
	} else if u, err := user.Lookup(name); err == nil {
		home = u.HomeDir
	}
	if home == "" {
		return p
	}
	return home + rest
}
