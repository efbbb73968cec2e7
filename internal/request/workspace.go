package request

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/pypath"
)

const (
	maxSymlinks               = 255
	workspaceMode fs.FileMode = 0o700
)

// WorkspaceError is a cwd failure; Msg is one of the MsgWorkspace* texts.
type WorkspaceError struct {
	Msg string
	Err error // underlying OS error, if any
}

func (e *WorkspaceError) Error() string { return e.Msg }

// Unwrap returns the underlying OS error.
func (e *WorkspaceError) Unwrap() error { return e.Err }

// ResolveWorkspace turns the raw cwd into the resolved workspace path,
// creating it (mode 0700, with parents) when missing. A path equal to or
// below one of excluded (resolved the same way; the state directory) is
// refused as outside the roots: an agent working there could rewrite the
// thread files (protocol.md §3.4).
func ResolveWorkspace(raw string, roots *Roots, excluded ...string) (string, error) {
	if raw == "" || !filepath.IsAbs(pypath.ExpandUser(raw, os.LookupEnv)) {
		return "", &WorkspaceError{Msg: i18n.MsgWorkspaceNotAbsolute}
	}
	// The original expands every environment variable here (Python's
	// expandvars), which lets a caller read the server's environment,
	// tokens and cloud secrets included, back through the path the agent
	// echoes and the thread file stores. No variable is expanded: a cwd
	// that names one, set or not, is refused (docs/decisions.md).
	if len(pypath.References(raw)) > 0 {
		return "", &WorkspaceError{Msg: i18n.MsgWorkspaceInvalid}
	}
	logical := filepath.Clean(pypath.ExpandUser(raw, os.LookupEnv))
	resolved, err := realpath(logical)
	if err != nil {
		return "", &WorkspaceError{Msg: i18n.MsgWorkspaceInvalid, Err: err}
	}
	if !roots.contains(resolved) || insideAny(resolved, excluded) {
		return "", &WorkspaceError{Msg: i18n.MsgWorkspaceOutsideRoots}
	}
	fi, err := os.Stat(resolved)
	switch {
	case err == nil && !fi.IsDir():
		return "", &WorkspaceError{Msg: i18n.MsgWorkspaceNotDirectory}
	case err == nil:
		return resolved, nil
	case !missing(err):
		return "", &WorkspaceError{Msg: i18n.MsgWorkspaceInvalid, Err: err}
	}
	if err := os.MkdirAll(resolved, workspaceMode); err != nil {
		return "", &WorkspaceError{Msg: i18n.MsgWorkspaceCreateFailed, Err: err}
	}
	return resolved, nil
}

// within reports whether p is root or below it, on path boundaries.
func within(p, root string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

// insideAny reports whether p is at or below one of dirs, each resolved
// like a workspace (it need not exist yet). A dir that cannot be resolved
// is compared as written.
func insideAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		if r, err := realpath(d); err == nil {
			d = r
		}
		if within(p, d) {
			return true
		}
	}
	return false
}

// missing reports errors that mean "this path does not exist".
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// realpath resolves symlinks in the absolute path p like Python's
// Path.resolve(strict=False): components that do not exist are appended
// as they are, so the result need not exist. A symlink loop, or an OS
// error other than "missing", is an error.
func realpath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", errors.New("path is not absolute")
	}
	sep := string(filepath.Separator)
	rest := strings.Split(p, sep)
	resolved := sep
	links := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, name)
		fi, err := os.Lstat(next)
		if err != nil {
			if !missing(err) {
				return "", err
			}
			resolved = next
			continue
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", syscall.ELOOP
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = sep
		}
		rest = append(strings.Split(target, sep), rest...)
	}
	return resolved, nil
}
