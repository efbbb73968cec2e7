package demoagent

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// writeWorkspaceFile does what the normal turn's write_file trace says:
// it writes the template into the request's workspace and returns the
// tool result to report. An existing file with other content is left
// alone (a demo must never destroy a user's work), and the result says so
// (docs/decisions.md).
func writeWorkspaceFile(cwd, file, body string) string {
	path := filepath.Join(cwd, file)
	if cwd == "" || !filepath.IsAbs(cwd) {
		return "Did not write " + file + ": the workspace is not an absolute path"
	}
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, []byte(body)):
		return "Wrote " + strconv.Itoa(len(body)) + " bytes to " + path + " (unchanged)"
	case err == nil:
		return "Did not write " + path + ": the file exists with other content and the demo agent never overwrites"
	case !errors.Is(err, fs.ErrNotExist):
		return "Did not write " + path + ": " + reasonOf(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "Did not write " + path + ": " + reasonOf(err)
	}
	_, err = f.WriteString(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return "Did not write " + path + ": " + reasonOf(err)
	}
	return "Wrote " + strconv.Itoa(len(body)) + " bytes to " + path
}

// reasonOf is the OS reason without the path the *PathError repeats.
func reasonOf(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
