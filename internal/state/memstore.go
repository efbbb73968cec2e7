package state

import (
	"context"
	"fmt"
	"strconv"
	"sync"
)

// MemStore keeps thread documents in memory, encoded exactly as the file
// store writes them, with the same conditional save: it is the store of
// the adapter's own tests and of a process that needs no durability.
// Nothing survives the process.
type MemStore struct {
	mu   sync.Mutex
	docs map[string]memDoc
	seq  uint64
}

type memDoc struct {
	data []byte
	rev  Revision
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore { return &MemStore{docs: make(map[string]memDoc)} }

// Load implements Store.
func (m *MemStore) Load(ctx context.Context, threadID string) (*Thread, Revision, error) {
	if err := ctx.Err(); err != nil {
		return nil, NoRevision, err
	}
	if _, err := FileKey(threadID); err != nil {
		return nil, NoRevision, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	m.mu.Lock()
	d, ok := m.docs[threadID]
	m.mu.Unlock()
	if !ok {
		return nil, NoRevision, ErrNotFound
	}
	t, err := decodeThread(d.data, threadID)
	if err != nil {
		return nil, NoRevision, fmt.Errorf("%w: %s", ErrUnavailable, err.Error())
	}
	return t, d.rev, nil
}

// Save implements Store.
func (m *MemStore) Save(ctx context.Context, t *Thread, prev Revision) (Revision, error) {
	if err := ctx.Err(); err != nil {
		return NoRevision, err
	}
	data, err := encodeThread(t)
	if err != nil {
		return NoRevision, err
	}
	if _, err := FileKey(t.ThreadID); err != nil {
		return NoRevision, fmt.Errorf("%w: %w", ErrInvalidDocument, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.docs[t.ThreadID].rev != prev {
		return NoRevision, ErrConflict
	}
	m.seq++
	rev := Revision(strconv.FormatUint(m.seq, 10))
	m.docs[t.ThreadID] = memDoc{data: data, rev: rev}
	return rev, nil
}

// Bytes returns the stored encoding of a thread (nil when none), as the
// file store would have written it.
func (m *MemStore) Bytes(threadID string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]byte(nil), m.docs[threadID].data...)
}
