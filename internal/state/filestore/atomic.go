package filestore

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

// writeAtomic replaces path with data as the original does (protocol.md
// §8.5): a temporary file ".<name>.<random>.tmp" in the same directory,
// mode 0600, written, fsynced, renamed over path (up to three attempts on a
// permission error, which transient scanners and Windows locks cause),
// then the directory fsynced. When it returns nil the document is durable.
// The temporary file is removed on any failure, and the target is never a
// symlink.
func writeAtomic(path string, data []byte, rename func(string, string) error) (err error) {
	if err := refuseSymlink(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	crash := crashStart(path) // test builds only (-tags crashhook)
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
	if _, err = f.Write(data); err == nil {
		// Set before the rename so the document is never visible with a
		// wider mode, whatever the umask.
		err = f.Chmod(0o600)
	}
	if err == nil {
		crash.at("written", tmp)
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	crash.at("synced", tmp)
	if err = renameWithRetry(tmp, path, rename); err != nil {
		return err
	}
	crash.at("renamed", tmp)
	if err := syncDir(dir); err != nil {
		// The new document is in place, only its durability is unknown:
		// the caller treats the write as not committed (state.Store).
		return err
	}
	crash.at("dirsynced", tmp)
	return nil
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
