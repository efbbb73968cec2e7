package state

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

const (
	renameAttempts = 3
	renameBackoff  = 50 * time.Millisecond
	// tempAttempts bounds retries when a random temp name already exists.
	tempAttempts = 16
)

// openTemp writes data to a new private temporary file
// ".<name>.<random>.tmp" next to path (protocol.md §8.5), mode 0600, and
// returns it open so that its batch can fsync it; nothing is left behind
// on failure.
func openTemp(path string, data []byte) (tmp string, f *os.File, err error) {
	dir, name := filepath.Split(path)
	f, tmp, err = createTemp(dir, name)
	if err != nil {
		return "", nil, err
	}
	if _, err = f.Write(data); err == nil {
		// Set before the rename so the document is never visible with a
		// wider mode, whatever the umask.
		err = f.Chmod(0o600)
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return "", nil, err
	}
	return tmp, f, nil
}

// replaceWith renames tmp over path (up to three attempts on a permission
// error, which transient scanners and Windows locks cause); the target is
// never a symlink. tmp is removed on failure. The caller makes the rename
// durable (committer).
func replaceWith(tmp, path string, rename func(string, string) error) error {
	err := refuseSymlink(path)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		err = renameWithRetry(tmp, path, rename)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// createTemp opens a new private file with O_EXCL, so an existing file or
// symlink with the same name is never reused.
func createTemp(dir, name string) (*os.File, string, error) {
	for range tempAttempts {
		tmp := filepath.Join(dir, "."+name+"."+randomSuffix()+".tmp")
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
		if err == nil {
			return f, tmp, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("could not create a temporary file in %s", dir)
}

func renameWithRetry(from, to string, rename func(string, string) error) error {
	var err error
	for attempt := range renameAttempts {
		if err = rename(from, to); err == nil || !errors.Is(err, fs.ErrPermission) {
			return err
		}
		if attempt < renameAttempts-1 {
			time.Sleep(renameBackoff * time.Duration(attempt+1))
		}
	}
	return err
}

// syncDir makes the renames in dir durable. File systems that cannot fsync a
// directory report EINVAL; the rename is then as durable as they allow.
func syncDir(dir string) error {
	if !dirSyncSupported {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// randomSuffix returns 8 characters from [a-z0-9_], like Python's mkstemp.
func randomSuffix() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_"
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}
