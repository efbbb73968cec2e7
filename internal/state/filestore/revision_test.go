package filestore

import (
	"context"
	"errors"
	"os"
	"testing"
)

// TestConditionalSaveSeesOutsideWrites: the file store's revision is a
// digest of the bytes, so a document changed behind its back (an operator,
// another program) is a conflict too.
func TestConditionalSaveSeesOutsideWrites(t *testing.T) {
	ctx := context.Background()
	s := New(t.TempDir())
	r1, err := s.Save(ctx, sampleThread("thread-1"), NoRevision)
	if err != nil {
		t.Fatal(err)
	}
	path, _ := s.Path("thread-1")
	other := sampleThread("thread-1")
	other.RunDigests["outside"] = "x"
	data, err := Encode(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(ctx, sampleThread("thread-1"), r1); !errors.Is(err, ErrConflict) {
		t.Fatalf("save over an outside write: %v, want ErrConflict", err)
	}
}
