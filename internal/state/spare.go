package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// spareDirName is the directory, under the state root, that holds a
// FileStore's spare files (protocol.md §8.5). Only this process uses it: a
// leftover of an earlier one is removed before the first spare is made.
const spareDirName = ".spare"

// spares is the pool of spare files: regular files of this store that a
// save overwrites and then swaps with the thread's file in one atomic
// rename (exchange), so that the old document's inode becomes the next
// spare instead of being freed. Replacing a file by a new one frees an
// inode and allocates another on every save; on ext4 each allocation
// skips the inodes freed in the last seconds, so under many saves a
// create costs hundreds of microseconds where an overwrite costs a few
// (docs/benchmarks.md). Owned by the committer goroutine.
//
// A new thread's file is a spare renamed into threads/, so a burst of new
// threads empties the pool and each of them then costs a create. The pool
// remembers the most creates one burst needed (at most maxSpares) and,
// while no save waits, makes that many empty spares for the next burst
// (from prefillMin creates on).
type spares struct {
	dir     string
	names   []string
	ready   bool // dir made and emptied of an earlier process's leftovers
	broken  bool // no spares here (no exchange, no directory): new files only
	created int  // spares created since the committer was last idle
	want    int  // the most a burst created: the size to refill to
}

// take returns a spare holding data, open for its fsync, or ok=false
// when the caller must write a new temporary file instead.
func (p *spares) take(data []byte) (name string, f *os.File, ok bool) {
	if p.broken {
		return "", nil, false
	}
	if !p.ready {
		if err := p.prepare(); err != nil {
			p.broken = true
			return "", nil, false
		}
		p.ready = true
	}
	// Oldest first: the spare put back last was a thread's file a moment
	// ago, and a reader that opened it then may still be reading it. It
	// is overwritten only after every other spare was used.
	for len(p.names) > 0 {
		name = p.names[0]
		p.names = p.names[1:]
		if f, err := overwrite(name, data); err == nil {
			return name, f, true
		}
		_ = os.Remove(name)
	}
	tmp, f, err := openTemp(filepath.Join(p.dir, "spare.json"), data)
	if err != nil {
		return "", nil, false
	}
	p.created++
	return tmp, f, true
}

// idle ends a burst: its creates set the size the pool is refilled to.
func (p *spares) idle() {
	p.want = min(max(p.want, p.created), maxSpares)
	p.created = 0
}

// prefillMin is the smallest burst the pool is refilled for: a few
// creates cost nothing worth doing ahead.
const prefillMin = 32

// wantMore reports whether the pool is below the size of the largest
// burst so far (as of the last idle).
func (p *spares) wantMore() bool {
	return p.ready && !p.broken && p.want >= prefillMin && len(p.names) < p.want
}

// prefill makes one empty spare; a failure stops the refill until the
// next burst.
func (p *spares) prefill() {
	f, name, err := createTemp(p.dir, "spare.json")
	if err != nil {
		p.want = len(p.names)
		return
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(name)
		p.want = len(p.names)
		return
	}
	p.names = append(p.names, name)
}

// put returns a spare to the pool; beyond maxSpares it is removed.
func (p *spares) put(name string) {
	if len(p.names) >= maxSpares || p.broken {
		_ = os.Remove(name)
		return
	}
	p.names = append(p.names, name)
}

// release removes every pooled spare.
func (p *spares) release() {
	for _, name := range p.names {
		_ = os.Remove(name)
	}
	p.names = nil
}

// prepare makes the private spare directory and empties it.
func (p *spares) prepare() error {
	if err := os.Mkdir(p.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(p.dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is not a directory", p.dir)
	}
	if err := narrowMode(p.dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(p.dir, e.Name()))
		}
	}
	return nil
}

// overwrite replaces the content of the spare name with data, mode 0600,
// and returns it open.
func overwrite(name string, data []byte) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || linkCount(fi) != 1) {
		err = fmt.Errorf("%s is not a private regular file", filepath.Base(name))
	}
	if err == nil {
		_, err = f.WriteAt(data, 0)
	}
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if err == nil && fi.Mode().Perm() != 0o600 {
		err = f.Chmod(0o600)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// errExchangeUnsupported is exchange's answer where renameat2 does not
// exist.
var errExchangeUnsupported = errors.New("rename exchange not supported")

// exchangeUnsupported reports an exchange the file system or the kernel
// cannot do at all, as opposed to a failure of this one save.
func exchangeUnsupported(err error) bool {
	return errors.Is(err, errExchangeUnsupported) ||
		errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) ||
		errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.ENOTSUP)
}
