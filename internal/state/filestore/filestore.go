// Package filestore owns the file backend of the thread store: one JSON
// file per thread at <root>/threads/<FileKey>.json, written exactly as the
// original adapter writes it (protocol.md §8.5: a private temporary file
// beside the target, fsynced, renamed over it, the directory fsynced), the
// start-up sweep of temporary files a killed process left, the clean-up of
// what an earlier version of this gateway kept beside threads/ (legacy.go),
// and a crash hook that exists only in test builds (crashhook.go).
//
// The thread files are the only truth: nothing else is kept in the state
// directory, so the original adapter can always read it. This package must
// not encode, decode or validate documents itself (internal/state does, for
// every store), and it never logs or knows HTTP, AG-UI or A2A.
package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Store is the file store. Nothing is read or created until a thread is
// loaded or saved.
//
// Its conditional save compares revisions and writes under a lock of this
// store, so it is exact for the writers of one process; it cannot lock
// against another process on the same directory (a second adapter there
// is not supported; use a shared store for several replicas). A document
// another program writes is seen as a change all the same: the revision is
// a digest of the bytes.
type Store struct {
	root    string
	threads string
	// rename is os.Rename; tests wrap it to count attempts.
	rename func(oldpath, newpath string) error
	// locks serialise the compare and the write of one thread; threads
	// share a lock by hash, so memory does not grow with their number.
	locks [64]sync.Mutex
	seed  maphash.Seed
}

var _ state.Store = (*Store)(nil)

// New returns a store rooted at root (already resolved by the caller; see
// protocol.md §8.1). It touches nothing on disk.
func New(root string) *Store {
	return &Store{
		root: root, threads: filepath.Join(root, "threads"),
		rename: os.Rename, seed: maphash.MakeSeed(),
	}
}

// Path returns the file that holds threadID's document.
func (s *Store) Path(threadID string) (string, error) {
	key, err := state.FileKey(threadID)
	if err != nil {
		return "", err
	}
	return filepath.Join(s.threads, key+".json"), nil
}

// Load implements state.Store. It reads the file once: a save replaces a
// file by renaming a whole new one over it, so a reader sees the old or
// the new document, never a mix.
func (s *Store) Load(ctx context.Context, threadID string) (*state.Thread, state.Revision, error) {
	if err := ctx.Err(); err != nil {
		return nil, state.NoRevision, err
	}
	path, err := s.Path(threadID)
	if err != nil {
		return nil, state.NoRevision, fmt.Errorf("%w: %w", state.ErrUnavailable, err)
	}
	data, err := s.read(path)
	if err != nil {
		return nil, state.NoRevision, err
	}
	t, err := state.Decode(data, threadID)
	if err != nil {
		return nil, state.NoRevision, fmt.Errorf("%w (%s)", err, filepath.Base(path))
	}
	return t, revisionOf(data), nil
}

// Save implements state.Store: every save is durable when it returns nil,
// as in the original.
func (s *Store) Save(ctx context.Context, t *state.Thread, prev state.Revision) (state.Revision, error) {
	if err := ctx.Err(); err != nil {
		return state.NoRevision, err
	}
	data, err := state.Encode(t)
	if err != nil {
		return state.NoRevision, err
	}
	path, err := s.Path(t.ThreadID)
	if err != nil {
		return state.NoRevision, fmt.Errorf("%w: %w", state.ErrInvalidDocument, err)
	}
	mu := &s.locks[maphash.String(s.seed, path)%uint64(len(s.locks))]
	mu.Lock()
	defer mu.Unlock()
	current := state.NoRevision
	switch old, err := s.read(path); {
	case err == nil:
		current = revisionOf(old)
	case !errors.Is(err, state.ErrNotFound):
		return state.NoRevision, err
	}
	if current != prev {
		return state.NoRevision, state.ErrConflict
	}
	if err := s.ensureDirs(); err != nil {
		return state.NoRevision, fmt.Errorf("%w: %w", state.ErrUnavailable, err)
	}
	if err := writeAtomic(path, data, s.rename); err != nil {
		return state.NoRevision, fmt.Errorf("%w: %w", state.ErrUnavailable, err)
	}
	return revisionOf(data), nil
}

// revisionOf is the revision of a stored document: a digest of its bytes,
// so that a change made by anyone (another process, an operator, the
// original adapter on the same directory) is seen as a change.
func revisionOf(data []byte) state.Revision {
	sum := sha256.Sum256(data)
	return state.Revision(hex.EncodeToString(sum[:16]))
}

// read returns the stored bytes of path, state.ErrNotFound, or an error
// wrapping state.ErrUnavailable.
func (s *Store) read(path string) ([]byte, error) {
	if err := s.checkThreadsDir(); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, state.ErrNotFound
		}
		return nil, fmt.Errorf("%w: %w", state.ErrUnavailable, err)
	}
	data, err := readNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, state.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", state.ErrUnavailable, err)
	}
	return data, nil
}

// ensureDirs creates root and threads/ with mode 0700 and narrows existing
// ones to at most 0700. Unlike the original, which sets 0700 outright, it
// never adds permissions, so an operator's read-only threads/ stays
// read-only. threads/ must be a real directory: a symlink there could
// redirect every write.
func (s *Store) ensureDirs() error {
	if err := os.MkdirAll(s.root, 0o700); err != nil {
		return err
	}
	// Best effort, as in the original: the root may not be ours to change.
	_ = narrowMode(s.root)
	created := true
	if err := os.Mkdir(s.threads, 0o700); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		created = false
	}
	if err := s.checkThreadsDir(); err != nil {
		return err
	}
	if created {
		// Undo a umask that removed owner bits from our own directory, and
		// make the new directory's name durable before a file in it is.
		if err := os.Chmod(s.threads, 0o700); err != nil {
			return err
		}
		return syncDir(s.root)
	}
	return narrowMode(s.threads)
}

// narrowMode removes group and other permissions from path.
func narrowMode(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&^0o700 != 0 {
		return os.Chmod(path, perm&0o700)
	}
	return nil
}

func (s *Store) checkThreadsDir() error {
	fi, err := os.Lstat(s.threads)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("refusing symlinked directory %s", s.threads)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", s.threads)
	}
	return nil
}

// readNoFollow reads a regular file without following a symlink in its last
// component.
func readNoFollow(path string) ([]byte, error) {
	if err := refuseSymlink(path); err != nil {
		return nil, err
	}
	// O_NOFOLLOW closes the gap between the check and the open on Unix.
	// O_NONBLOCK: opening a FIFO planted under a thread's name must not
	// hang the request; it is refused below as not a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	if linkCount(fi) > 1 {
		// A hard link to a file elsewhere: reading or narrowing its mode
		// would touch a file that is not ours.
		return nil, fmt.Errorf("%s has more than one link", filepath.Base(path))
	}
	if fi.Mode().Perm() != 0o600 {
		// The original narrows the mode on load; failure is harmless here.
		_ = f.Chmod(0o600)
	}
	data, err := io.ReadAll(io.LimitReader(f, state.MaxDocumentSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > state.MaxDocumentSize {
		return nil, fmt.Errorf("%s exceeds %d bytes", filepath.Base(path), state.MaxDocumentSize)
	}
	return data, nil
}

// refuseSymlink fails when path is a symlink; a missing path passes through
// as fs.ErrNotExist.
func refuseSymlink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("refusing symlink %s", filepath.Base(path))
	}
	return nil
}
