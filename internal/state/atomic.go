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

// writeAtomic replaces path with data (protocol.md §8.5): a temp file
// ".<name>.<random>.tmp" in the same directory, write, fsync, rename (up to
// three attempts on a permission error, which transient scanners and Windows
// locks cause), then fsync of the directory. The temp file is removed on
// any failure and the target is never a symlink.
func writeAtomic(path string, data []byte, rename func(string, string) error) (err error) {
	if err := refuseSymlink(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	crash := crashStart()
	dir, name := filepath.Split(path)
	f, tmp, err := createTemp(dir, name)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	// Set before the rename so the document is never visible with a wider
	// mode, whatever the umask.
	if err = f.Chmod(0o600); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	crashPoint(crash, "temp")
	if err = renameWithRetry(tmp, path, rename); err != nil {
		return err
	}
	crashPoint(crash, "renamed")
	return syncDir(dir)
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

// syncDir makes the rename durable. File systems that cannot fsync a
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
