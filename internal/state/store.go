package state

import (
	"context"
	"errors"
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
// update. When Save returns nil the new document is durable; on any other
// error the caller must treat the write as not committed (the stored
// document is the old one or, if the failure came after the replace,
// possibly the new one). Save refuses a document that Load would reject
// (error wrapping ErrInvalidDocument) and does not retain t. Both return
// ctx.Err() unwrapped, before any I/O, when ctx is already done.
type Store interface {
	Load(ctx context.Context, threadID string) (*Thread, Revision, error)
	Save(ctx context.Context, t *Thread, prev Revision) (Revision, error)
}

// MaxDocumentSize bounds a stored document: Save refuses a larger one and
// a store reads no more than this (plus one byte, to notice). A real
// document is a few KiB, so anything near this limit is corrupt or
// hostile.
const MaxDocumentSize = 16 << 20
