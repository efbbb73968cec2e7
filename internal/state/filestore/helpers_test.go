package filestore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// The tests of this package use the internal/state types under short
// names.
type (
	Thread        = state.Thread
	Pending       = state.Pending
	Revision      = state.Revision
	AppliedDigest = state.AppliedDigest
)

const NoRevision = state.NoRevision

var (
	ErrNotFound        = state.ErrNotFound
	ErrUnavailable     = state.ErrUnavailable
	ErrConflict        = state.ErrConflict
	ErrInvalidDocument = state.ErrInvalidDocument
	Encode             = state.Encode
)

func strp(s string) *string { return &s }

// sampleThread is a populated binding shared by the tests.
func sampleThread(threadID string) *Thread {
	t := state.NewThread(threadID, "/srv/iac/session-1", strp("user-1"), "exec-1", "ros-1")
	t.IacCodeSessionID = strp("session-1")
	t.Execution.TaskID = strp("task-1")
	t.Execution.PipelineSequence = 3
	t.Execution.PipelineOpenSteps = []string{"step:intent_parsing"}
	t.Execution.TextSnapshotDigests = []string{hex64('a')}
	t.Execution.Pending["perm-1"] = Pending{
		Value:    map[string]any{"inputId": "perm-1", "kind": "permission", "options": []any{map[string]any{"id": "allow"}}},
		Sideband: true,
	}
	t.RecordRun("run-1", hex64('b'))
	t.AddApplied("exec-0", "perm-0", hex64('c'))
	t.TerminalExecutionIDs = []string{"exec-0"}
	return t
}

func hex64(c byte) string { return strings.Repeat(string(c), 64) }

func nan() float64 {
	var zero float64
	return zero / zero
}

func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "agui")
	return New(root), root
}

// saveLatest saves th over whatever is stored, as the tests written
// before conditional saves expect: it passes the stored revision.
func saveLatest(ctx context.Context, s *Store, th *Thread) error {
	prev := NoRevision
	if th != nil {
		if path, err := s.Path(th.ThreadID); err == nil {
			if data, err := s.read(path); err == nil {
				prev = revisionOf(data)
			}
		}
	}
	_, err := s.Save(ctx, th, prev)
	return err
}

// load is Load without the revision.
func load(ctx context.Context, s *Store, id string) (*Thread, error) {
	th, _, err := s.Load(ctx, id)
	return th, err
}

func mustSave(t *testing.T, s *Store, th *Thread) {
	t.Helper()
	if err := saveLatest(context.Background(), s, th); err != nil {
		t.Fatalf("Save(%q): %v", th.ThreadID, err)
	}
}

func mustLoad(t *testing.T, s *Store, id string) *Thread {
	t.Helper()
	th, err := load(context.Background(), s, id)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	return th
}

// dirEntries lists file names in dir, so tests can spot leftover temp files.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
