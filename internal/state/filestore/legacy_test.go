package filestore

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// journalRecord is one save as the earlier version journaled it.
type journalRecord struct {
	threadID string
	data     []byte
}

// writeJournalFile writes <root>/.journal/<name> in the earlier version's
// layout (legacy.go): a header of epoch (0: empty) and activation seq, and
// the records.
func writeJournalFile(t *testing.T, root, name string, seq, epoch uint64, recs ...journalRecord) {
	t.Helper()
	dir := filepath.Join(root, legacyJournalDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b := append([]byte(nil), journalMagic...)
	b = binary.LittleEndian.AppendUint64(b, seq)
	b = binary.LittleEndian.AppendUint64(b, epoch)
	b = append(b, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	for _, r := range recs {
		var body []byte
		body = binary.LittleEndian.AppendUint16(body, uint16(len(r.threadID)))
		body = append(body, r.threadID...)
		body = append(body, 0) // the replaced revision: none
		body = binary.LittleEndian.AppendUint64(body, 1)
		body = append(body, r.data...)
		head := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
		head = binary.LittleEndian.AppendUint64(head, epoch)
		crc := crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, body)
		b = append(b, head...)
		b = binary.LittleEndian.AppendUint32(b, crc)
		b = append(b, body...)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func encoded(t *testing.T, th *Thread) []byte {
	t.Helper()
	data, err := Encode(th)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRetireLegacyRemovesWhatIsApplied: an empty journal (a graceful stop
// of the earlier version), one whose last saves are all in the thread
// files (a kill after they were renamed), and the spare files go; the
// thread files stay as they are.
func TestRetireLegacyRemovesWhatIsApplied(t *testing.T) {
	s, root := newStore(t)
	a, b := sampleThread("thread-a"), sampleThread("thread-b")
	mustSave(t, s, a)
	mustSave(t, s, b)
	older := sampleThread("thread-a")
	older.Execution.PipelineSequence = 1
	// File 1 was active before file 0: thread-a's last save is in 0.
	writeJournalFile(t, root, "1", 4, 77, journalRecord{"thread-a", encoded(t, older)}, journalRecord{"thread-b", encoded(t, b)})
	writeJournalFile(t, root, "0", 5, 78, journalRecord{"thread-a", encoded(t, a)})
	if err := os.MkdirAll(filepath.Join(root, legacySpareDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, legacySpareDir, "3"), []byte("old bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := dirEntries(t, filepath.Join(root, "threads"))
	if err := s.RetireLegacy(); err != nil {
		t.Fatal(err)
	}
	if got := dirEntries(t, root); !slices.Equal(got, []string{"threads"}) {
		t.Fatalf("state directory holds %v, want only threads", got)
	}
	if got := dirEntries(t, filepath.Join(root, "threads")); !slices.Equal(got, before) {
		t.Fatalf("threads/ changed: %v, was %v", got, before)
	}
	if got := mustLoad(t, s, "thread-a"); got.Execution.PipelineSequence != 3 {
		t.Fatalf("thread-a: sequence %d, want 3", got.Execution.PipelineSequence)
	}

	// Empty journal files and a torn header hold nothing.
	writeJournalFile(t, root, "0", 6, 0, journalRecord{"thread-a", encoded(t, older)})
	if err := os.WriteFile(filepath.Join(root, legacyJournalDir, "1"), []byte("IACJRNL1 torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.RetireLegacy(); err != nil {
		t.Fatal(err)
	}
	if got := dirEntries(t, root); !slices.Equal(got, []string{"threads"}) {
		t.Fatalf("state directory holds %v, want only threads", got)
	}
	// Nothing to do: no error, nothing made.
	if err := New(filepath.Join(t.TempDir(), "none")).RetireLegacy(); err != nil {
		t.Fatal(err)
	}
}

// TestRetireLegacyFailsClosed: a journal whose last save of a thread is
// not what its file holds (a file older than the save, a missing file, or
// one another program wrote since) stops the start, names the files and
// changes nothing: neither the thread files nor the journal.
func TestRetireLegacyFailsClosed(t *testing.T) {
	s, root := newStore(t)
	a := sampleThread("thread-a")
	mustSave(t, s, a)
	newer := sampleThread("thread-a")
	newer.Execution.PipelineSequence = 9
	gone := sampleThread("thread-gone")
	writeJournalFile(t, root, "0", 1, 5, journalRecord{"thread-a", encoded(t, newer)}, journalRecord{"thread-gone", encoded(t, gone)})
	p, _ := s.Path("thread-a")
	before, _ := os.ReadFile(p)
	journal, _ := os.ReadFile(filepath.Join(root, legacyJournalDir, "0"))

	err := s.RetireLegacy()
	if !errors.Is(err, ErrLegacyJournal) || !strings.Contains(err.Error(), "2 thread files ([thread-a.json thread-gone.json])") ||
		!strings.Contains(err.Error(), filepath.Join(root, ".journal")) {
		t.Fatalf("RetireLegacy = %v", err)
	}
	if after, _ := os.ReadFile(p); string(after) != string(before) {
		t.Fatal("thread file changed")
	}
	if got, _ := os.ReadFile(filepath.Join(root, legacyJournalDir, "0")); string(got) != string(journal) {
		t.Fatal("journal changed")
	}
	if _, err := os.Stat(filepath.Join(root, "threads", "thread-gone.json")); !os.IsNotExist(err) {
		t.Fatalf("a journaled document was written: %v", err)
	}
	// Once the operator moved the journal away, the start goes on.
	if err := os.Rename(filepath.Join(root, legacyJournalDir), filepath.Join(t.TempDir(), "kept")); err != nil {
		t.Fatal(err)
	}
	if err := s.RetireLegacy(); err != nil {
		t.Fatal(err)
	}
}
