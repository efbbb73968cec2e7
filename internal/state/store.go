package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

var (
	// ErrNotFound means no document exists for the thread.
	ErrNotFound = errors.New("state: thread not found")
	// ErrUnavailable is wrapped by every error for a document that exists but
	// cannot be used (unreadable, corrupt, invalid, symlinked) and by Save
	// I/O failures. Only that thread is affected (503 STATE_UNAVAILABLE).
	ErrUnavailable = errors.New("state: thread state unavailable")
	// ErrConflict means the stored document is no longer the revision the
	// writer loaded: somebody else saved the thread meanwhile. Nothing was
	// written; the writer reloads and re-applies its change, or gives up.
	ErrConflict = errors.New("state: thread changed since it was loaded")
	// ErrFenced means the writer's lease on the thread (WithLease) is no
	// longer the current one: another replica owns the thread now. Nothing
	// was written, and the writer must not retry.
	ErrFenced = errors.New("state: the thread is owned by another replica")
)

// Revision identifies one stored version of a thread document. It is
// opaque to callers: they only hand back what Load or Save returned.
// NoRevision stands for "no document is stored".
type Revision string

// NoRevision is the revision of a thread that has no stored document.
const NoRevision Revision = ""

// Store persists thread documents. Implementations must be safe for
// concurrent use by several goroutines.
//
// Load returns the validated document of threadID and its revision,
// ErrNotFound when none exists, or an error wrapping ErrUnavailable when it
// cannot be read or fails validation (protocol.md §8.4); a bad document
// affects that thread alone. Load reads only the requested thread.
//
// Save replaces the thread's document atomically if, and only if, the
// stored revision is still prev (NoRevision: nothing may be stored yet),
// and returns the new revision. A different stored revision gives
// ErrConflict and writes nothing: two writers can never lose each other's
// update. When Save returns nil the new document is durable (for a ctx
// made by BestEffort: written atomically, durable later); on any other
// error the caller must treat the write as not committed (the stored
// document is the old one or, if the failure came after the replace,
// possibly the new one). Save refuses a document that Load would reject
// (error wrapping ErrInvalidDocument) and does not retain t. Both return
// ctx.Err() unwrapped, before any I/O, when ctx is already done.
type Store interface {
	Load(ctx context.Context, threadID string) (*Thread, Revision, error)
	Save(ctx context.Context, t *Thread, prev Revision) (Revision, error)
}

// revisionOf is the revision of a stored document: a digest of its bytes,
// so that a change made by anyone (another process, an operator, the
// original adapter on the same directory) is seen as a change.
func revisionOf(data []byte) Revision {
	sum := sha256.Sum256(data)
	return Revision(hex.EncodeToString(sum[:16]))
}

// maxDocumentSize bounds what Load reads; a real document is a few KiB, so
// anything near this limit is corrupt or hostile.
const maxDocumentSize = 16 << 20

// FileStore is the file backend: one JSON file per thread at
// <root>/threads/<FileKey>.json, written atomically with mode 0600 in
// directories with mode 0700. Nothing is read or created until a thread is
// loaded or saved.
//
// Its conditional save compares revisions and writes in the store's one
// committer (commit.go), so it is exact for the writers of one process; it
// cannot lock against another process on the same directory (a second
// adapter there is not supported; use a shared store for several
// replicas). Spare files live in <root>/.spare (spare.go); Close removes
// them.
type FileStore struct {
	root    string
	threads string
	// rename is os.Rename and exchange swaps two names (spare.go); tests
	// wrap them to count attempts.
	rename   func(oldpath, newpath string) error
	exchange func(from, to string) error
	// commits batches the saves: the only writer of the files.
	commits committer

	// The journal (journal.go): opened and replayed before the first load
	// or save, made by the first save when none exists. journalOff: saves
	// go without one (another process holds it, it failed, or Close).
	openMu      sync.Mutex
	opened      atomic.Bool
	journal     *journal // owned by the committer once opened
	journalOff  bool
	journalSize int64
}

var _ Store = (*FileStore)(nil)

// NewFileStore returns a store rooted at root (already resolved by the
// caller; see protocol.md §8.1). It touches nothing on disk.
func NewFileStore(root string) *FileStore {
	return &FileStore{
		root: root, threads: filepath.Join(root, "threads"),
		rename: os.Rename, exchange: exchange,
		commits:     committer{spares: spares{dir: filepath.Join(root, spareDirName)}},
		journalSize: defaultJournalSize,
	}
}

// Path returns the file that holds threadID's document.
func (s *FileStore) Path(threadID string) (string, error) {
	key, err := FileKey(threadID)
	if err != nil {
		return "", err
	}
	return filepath.Join(s.threads, key+".json"), nil
}

// Load implements Store.
func (s *FileStore) Load(ctx context.Context, threadID string) (*Thread, Revision, error) {
	if err := ctx.Err(); err != nil {
		return nil, NoRevision, err
	}
	path, err := s.Path(threadID)
	if err != nil {
		return nil, NoRevision, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err := s.open(); err != nil {
		return nil, NoRevision, err
	}
	for attempt := 1; ; attempt++ {
		data, err := s.read(path)
		if err != nil {
			return nil, NoRevision, err
		}
		t, err := decodeThread(data, threadID)
		if err == nil {
			return t, revisionOf(data), nil
		}
		// A file opened just before a save swapped it out is the old inode,
		// which the store keeps as a spare and may already be overwriting
		// (spare.go): a torn read. The name leads to a whole document
		// again, so only a document that fails every time is broken.
		if attempt == loadAttempts {
			return nil, NoRevision, fmt.Errorf("%w: %s: %s", ErrUnavailable, filepath.Base(path), err.Error())
		}
	}
}

// loadAttempts bounds Load's reads of a document that does not decode.
const loadAttempts = 3

// read returns the stored bytes of path, ErrNotFound, or an error wrapping
// ErrUnavailable.
func (s *FileStore) read(path string) ([]byte, error) {
	if err := s.checkThreadsDir(); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	data, err := readNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return data, nil
}

// Save implements Store.
func (s *FileStore) Save(ctx context.Context, t *Thread, prev Revision) (Revision, error) {
	if err := ctx.Err(); err != nil {
		return NoRevision, err
	}
	data, err := encodeThread(t)
	if err != nil {
		return NoRevision, err
	}
	path, err := s.Path(t.ThreadID)
	if err != nil {
		return NoRevision, fmt.Errorf("%w: %w", ErrInvalidDocument, err)
	}
	if err := s.open(); err != nil {
		return NoRevision, err
	}
	// The batch compares the revision and writes (commit.go).
	op := &saveOp{
		path: path, threadID: t.ThreadID, data: data, prev: prev, rev: revisionOf(data),
		durable: !isBestEffort(ctx),
		crash:   crashStart(), // test builds only (-tags crashhook)
		done:    make(chan struct{}),
	}
	if err := s.submit(op); err != nil {
		return NoRevision, err
	}
	return op.rev, nil
}

// revision returns the revision stored at path (NoRevision when there is
// none) or an error wrapping ErrUnavailable.
func (s *FileStore) revision(path string) (Revision, error) {
	switch old, err := s.read(path); {
	case err == nil:
		return revisionOf(old), nil
	case errors.Is(err, ErrNotFound):
		return NoRevision, nil
	default:
		return NoRevision, err
	}
}

// ensureDirs creates root and threads/ with mode 0700 and narrows existing
// ones to at most 0700. Unlike the original, which sets 0700 outright, it
// never adds permissions, so an operator's read-only threads/ stays
// read-only. threads/ must be a real directory: a symlink there could
// redirect every write.
func (s *FileStore) ensureDirs() error {
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
		// Undo a umask that removed owner bits from our own directory.
		return os.Chmod(s.threads, 0o700)
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

func (s *FileStore) checkThreadsDir() error {
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
	data, err := io.ReadAll(io.LimitReader(f, maxDocumentSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDocumentSize {
		return nil, fmt.Errorf("%s exceeds %d bytes", filepath.Base(path), maxDocumentSize)
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
