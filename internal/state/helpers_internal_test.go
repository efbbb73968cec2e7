package state

import (
	"context"
	"testing"
)

// newStore is the store of this package's tests: the memory store, which
// encodes and decodes every document as the file store does.
func newStore(*testing.T) *MemStore { return NewMemStore() }

// saveLatest saves th over whatever is stored, as the tests written
// before conditional saves expect: it passes the stored revision.
func saveLatest(ctx context.Context, s *MemStore, th *Thread) error {
	prev := NoRevision
	if th != nil {
		s.mu.Lock()
		prev = s.docs[th.ThreadID].rev
		s.mu.Unlock()
	}
	_, err := s.Save(ctx, th, prev)
	return err
}

func mustSave(t *testing.T, s *MemStore, th *Thread) {
	t.Helper()
	if err := saveLatest(context.Background(), s, th); err != nil {
		t.Fatalf("Save(%q): %v", th.ThreadID, err)
	}
}

func mustLoad(t *testing.T, s *MemStore, id string) *Thread {
	t.Helper()
	th, _, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	return th
}
