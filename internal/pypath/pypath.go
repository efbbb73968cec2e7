// Package pypath expands paths the way Python's os.path.expanduser and
// os.path.expandvars do on POSIX, because the original adapter resolved its
// state directory and workspaces with them: the same configuration must
// name the same directories in both implementations.
//
// It owns only these two string expansions; it must not touch the file
// system beyond looking up user accounts.
package pypath

import (
	"os/user"
	"strings"
)

// Lookup reads an environment variable; ok is false when it is unset.
type Lookup func(name string) (value string, ok bool)

// ExpandUser expands a leading "~" (HOME, else the current account's home)
// or "~name" (that account's home). An unknown user or home leaves the
// path unchanged; the home's trailing slashes are dropped, as in Python.
func ExpandUser(p string, env Lookup) string {
	if !strings.HasPrefix(p, "~") {
		return p
	}
	i := strings.IndexByte(p, '/')
	if i < 0 {
		i = len(p)
	}
	var home string
	if i == 1 {
		if h, ok := env("HOME"); ok {
			home = h
		} else if u, err := user.Current(); err == nil {
			home = u.HomeDir
		} else {
			return p
		}
	} else {
		u, err := user.Lookup(p[1:i])
		if err != nil {
			return p
		}
		home = u.HomeDir
	}
	home = strings.TrimRight(home, "/")
	if out := home + p[i:]; out != "" {
		return out
	}
	return "/"
}

// ExpandVars expands $name and ${name}: names are ASCII word characters,
// and unset variables stay as written.
func ExpandVars(p string, env Lookup) string {
	if !strings.Contains(p, "$") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		if p[i] != '$' {
			b.WriteByte(p[i])
			i++
			continue
		}
		name, end := varName(p, i+1)
		if end < 0 {
			b.WriteByte('$')
			i++
			continue
		}
		if v, ok := env(name); ok {
			b.WriteString(v)
		} else {
			b.WriteString(p[i:end])
		}
		i = end
	}
	return b.String()
}

// References lists the names of the variables that ExpandVars would look
// up in p, in order, with repeats; "${}" yields the empty name.
func References(p string) []string {
	var names []string
	for i := strings.IndexByte(p, '$'); i >= 0 && i < len(p); {
		name, end := varName(p, i+1)
		if end < 0 {
			end = i + 1
		} else {
			names = append(names, name)
		}
		j := strings.IndexByte(p[end:], '$')
		if j < 0 {
			break
		}
		i = end + j
	}
	return names
}

// varName parses a variable name starting at j (just after '$'); end is
// the index after the reference, or -1 when there is none.
func varName(p string, j int) (name string, end int) {
	if j < len(p) && p[j] == '{' {
		k := strings.IndexByte(p[j+1:], '}')
		if k < 0 {
			return "", -1
		}
		return p[j+1 : j+1+k], j + 2 + k
	}
	k := j
	for k < len(p) && isWord(p[k]) {
		k++
	}
	if k == j {
		return "", -1
	}
	return p[j:k], k
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
