package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// crash leaves s as a killed process would: nothing checkpointed, the
// journal's lock dropped (a new store in this process could not take it
// otherwise), the spares left behind.
func crash(t *testing.T, s *FileStore) {
	t.Helper()
	waitIdle(s)
	if s.journal == nil {
		t.Fatal("the store has no journal")
	}
	j := s.journal
	j.mu.Lock()
	for _, jf := range j.files {
		for jf.busy {
			j.done.Wait()
		}
	}
	j.mu.Unlock()
	j.closeFiles()
	s.journal, s.journalOff = nil, true
}

// journalEpochs returns the epochs in the headers of both journal files
// (0: empty).
func journalEpochs(t *testing.T, root string) [2]uint64 {
	t.Helper()
	var out [2]uint64
	for i := range out {
		data, err := os.ReadFile(filepath.Join(root, journalDirName, fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		_, epoch, ok := parseHeader(data)
		if !ok {
			t.Fatalf("journal %d: invalid header", i)
		}
		out[i] = epoch
	}
	return out
}

// saveSeq saves th with the given pipeline sequence and returns the
// stored bytes.
func saveSeq(t *testing.T, s *FileStore, th *Thread, seq int64) []byte {
	t.Helper()
	th.Execution.PipelineSequence = seq
	mustSave(t, s, th)
	p, _ := s.Path(th.ThreadID)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestJournalReplaysLostWrites: after a power loss (simulated: the test
// rewrites the thread files as writes that never reached the disk would
// leave them, which no real part can do on demand) the next store writes
// the journaled documents back: a file that reverted to an earlier
// revision, one that is gone, one that is torn, one that holds another
// thread's document (a spare swapped in before its new bytes were
// written) and one that holds an old document of its own thread. Then the
// journal is empty.
func TestJournalReplaysLostWrites(t *testing.T) {
	s, root := newStore(t)
	ids := []string{"reverted", "gone", "torn", "other", "stale"}
	var first, last [5][]byte
	for i, id := range ids {
		th := sampleThread(id)
		first[i] = saveSeq(t, s, th, 1)
		saveSeq(t, s, th, 2)
		last[i] = saveSeq(t, s, th, int64(10+i))
	}
	crash(t, s)
	path := func(id string) string { p, _ := s.Path(id); return p }
	write := func(id string, data []byte) {
		if err := os.WriteFile(path(id), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("reverted", first[0])
	if err := os.Remove(path("gone")); err != nil {
		t.Fatal(err)
	}
	write("torn", last[2][:len(last[2])/2])
	write("other", last[0])
	old := sampleThread("stale") // a revision older than the journal's
	old.Execution.PipelineSequence = 0
	data, err := encodeThread(old)
	if err != nil {
		t.Fatal(err)
	}
	write("stale", data)

	s2 := NewFileStore(root)
	t.Cleanup(func() { _ = s2.Close() })
	for i, id := range ids {
		if got := mustLoad(t, s2, id).Execution.PipelineSequence; got != int64(10+i) {
			t.Errorf("%s: sequence %d after the replay, want %d", id, got, 10+i)
		}
		if got, _ := os.ReadFile(path(id)); string(got) != string(last[i]) {
			t.Errorf("%s: the file is not the last journaled document", id)
		}
	}
	if e := journalEpochs(t, root); e != [2]uint64{} {
		t.Fatalf("journal epochs %v after the replay, want empty", e)
	}
}

// TestJournalKeepsAnotherProgramsDocument: a thread file that another
// program (the original adapter) replaced after this process stopped is
// kept; the journal only restores what this process wrote.
func TestJournalKeepsAnotherProgramsDocument(t *testing.T) {
	s, root := newStore(t)
	th := sampleThread("thread-1")
	saveSeq(t, s, th, 1)
	saveSeq(t, s, th, 2)
	crash(t, s)
	theirs := sampleThread("thread-1")
	theirs.Execution.PipelineSequence = 77
	data, err := encodeThread(theirs)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Path("thread-1")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	s2 := NewFileStore(root)
	t.Cleanup(func() { _ = s2.Close() })
	if got := mustLoad(t, s2, "thread-1").Execution.PipelineSequence; got != 77 {
		t.Fatalf("sequence %d, want the other program's 77", got)
	}
}

// TestJournalTornTail: a record cut short by the crash is not replayed;
// the records before it are.
func TestJournalTornTail(t *testing.T) {
	s, root := newStore(t)
	a, b := sampleThread("thread-a"), sampleThread("thread-b")
	saveSeq(t, s, a, 5)
	saveSeq(t, s, b, 6)
	idx := s.journal.active
	end := s.journal.files[idx].off
	saveSeq(t, s, b, 7)
	crash(t, s)
	// Cut the last record: its tail never reached the disk.
	name := filepath.Join(root, journalDirName, fmt.Sprint(idx))
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 64), end+100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, id := range []string{"thread-a", "thread-b"} {
		p, _ := s.Path(id)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	s2 := NewFileStore(root)
	t.Cleanup(func() { _ = s2.Close() })
	if got := mustLoad(t, s2, "thread-a").Execution.PipelineSequence; got != 5 {
		t.Errorf("thread-a: sequence %d, want 5", got)
	}
	if got := mustLoad(t, s2, "thread-b").Execution.PipelineSequence; got != 6 {
		t.Errorf("thread-b: sequence %d, want 6 (the torn record's 7 was never acknowledged)", got)
	}
}

// TestJournalRotation: with room for a few records per file, saves move
// from one journal file to the other while the first is checkpointed;
// every save stays readable, a crash at the end loses nothing, and Close
// leaves both files empty.
func TestJournalRotation(t *testing.T) {
	root := filepath.Join(t.TempDir(), "agui")
	s := NewFileStore(root)
	s.journalSize = 8 << 10
	var seqs [6]int64
	for i := range 120 {
		k := i % len(seqs)
		seqs[k] = int64(i)
		th := sampleThread(fmt.Sprintf("thread-%d", k))
		saveSeq(t, s, th, int64(i))
		if got := mustLoad(t, s, th.ThreadID).Execution.PipelineSequence; got != int64(i) {
			t.Fatalf("save %d: sequence %d", i, got)
		}
	}
	if s.journal.seq < 10 {
		t.Fatalf("%d activations for 120 saves in 8 KiB files", s.journal.seq)
	}
	crash(t, s)
	s2 := NewFileStore(root)
	s2.journalSize = 8 << 10
	for k, want := range seqs {
		if got := mustLoad(t, s2, fmt.Sprintf("thread-%d", k)).Execution.PipelineSequence; got != want {
			t.Fatalf("thread-%d: sequence %d after the crash, want %d", k, got, want)
		}
	}
	saveSeq(t, s2, sampleThread("thread-0"), 500)
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if e := journalEpochs(t, root); e != [2]uint64{} {
		t.Fatalf("journal epochs %v after Close, want empty", e)
	}
}

// TestJournalHeldByAnotherStore: a second store on the same directory
// (another process, here a second open of the files) cannot take the
// journal and syncs its own files instead; both keep working.
func TestJournalHeldByAnotherStore(t *testing.T) {
	s, root := newStore(t)
	saveSeq(t, s, sampleThread("thread-1"), 1)
	s2 := NewFileStore(root)
	t.Cleanup(func() { _ = s2.Close() })
	saveSeq(t, s2, sampleThread("thread-2"), 2)
	if s2.journal != nil || !s2.journalOff {
		t.Fatal("the second store uses the journal")
	}
	if got := mustLoad(t, s, "thread-2").Execution.PipelineSequence; got != 2 {
		t.Fatalf("sequence %d", got)
	}
	saveSeq(t, s, sampleThread("thread-1"), 3)
	if got := mustLoad(t, s2, "thread-1").Execution.PipelineSequence; got != 3 {
		t.Fatalf("sequence %d", got)
	}
}

// TestJournalOversizedDocument: a document larger than a journal file is
// saved without the journal, durably, and the journal holds no record of
// it.
func TestJournalOversizedDocument(t *testing.T) {
	s, _ := newStore(t)
	s.journalSize = 4 << 10
	saveSeq(t, s, sampleThread("small"), 1)
	big := sampleThread("big")
	for i := range 100 {
		big.RunDigests[fmt.Sprintf("run-%03d", i)] = hex64('b')
	}
	saveSeq(t, s, big, 2)
	if got := mustLoad(t, s, "big").Execution.PipelineSequence; got != 2 {
		t.Fatalf("sequence %d", got)
	}
	recs, err := s.journal.records()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.threadID == "big" {
			t.Fatal("the oversized document was journaled")
		}
	}
	if len(recs) != 1 || recs[0].threadID != "small" {
		t.Fatalf("%d records, want the small thread's", len(recs))
	}
}

// TestJournalLoadFirst: a store whose first call is a Load replays the
// journal before it reads the thread.
func TestJournalLoadFirst(t *testing.T) {
	s, root := newStore(t)
	saveSeq(t, s, sampleThread("thread-1"), 4)
	crash(t, s)
	p, _ := s.Path("thread-1")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	s2 := NewFileStore(root)
	t.Cleanup(func() { _ = s2.Close() })
	th, _, err := s2.Load(context.Background(), "thread-1")
	if err != nil || th.Execution.PipelineSequence != 4 {
		t.Fatalf("Load = %v, %v; want sequence 4", th, err)
	}
}

// FuzzJournalRecords: records written by appendRecord read back as they
// were, in order, whatever the thread id, revision and document; any bytes
// after them, or in their place, end the reading without a panic.
func FuzzJournalRecords(f *testing.F) {
	f.Add("thread-1", "0123456789abcdef0123456789abcdef", []byte(`{"a":1}`), uint8(2), []byte{0, 1, 2})
	f.Add("", "", []byte{}, uint8(0), []byte{})
	f.Fuzz(func(t *testing.T, id, prev string, data []byte, n uint8, tail []byte) {
		if len(id) > 0xffff || len(prev) > 0xff {
			return
		}
		const epoch = 0x1234567890abcdef
		buf := make([]byte, journalHeaderSize)
		for i := range int(n % 4) {
			buf = appendRecord(buf, epoch, id, Revision(prev), data, int64(i))
		}
		buf = append(buf, tail...)
		recs := parseRecords(buf, epoch)
		if len(recs) < int(n%4) {
			t.Fatalf("%d records read back, %d written", len(recs), n%4)
		}
		for i, r := range recs[:n%4] {
			if r.threadID != id || string(r.prev) != prev || string(r.data) != string(data) || r.at.UnixNano() != int64(i) {
				t.Fatalf("record %d read back differently", i)
			}
		}
		_ = parseRecords(tail, epoch)
		_, _, _ = parseHeader(tail)
	})
}

// TestJournalFileMissing: with one journal file deleted after a crash,
// the other's records are still written back.
func TestJournalFileMissing(t *testing.T) {
	s, root := newStore(t)
	saveSeq(t, s, sampleThread("thread-1"), 8)
	other := 1 - s.journal.active
	crash(t, s)
	if err := os.Remove(filepath.Join(root, journalDirName, fmt.Sprint(other))); err != nil {
		t.Fatal(err)
	}
	p, _ := s.Path("thread-1")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	s2 := NewFileStore(root)
	t.Cleanup(func() { _ = s2.Close() })
	if got := mustLoad(t, s2, "thread-1").Execution.PipelineSequence; got != 8 {
		t.Fatalf("sequence %d, want 8", got)
	}
}

// TestJournalCheckpointManyFiles: checkpoints of many thread files (more
// than syncWorkers at once) keep every thread's last document through
// rotations, a crash and Close.
func TestJournalCheckpointManyFiles(t *testing.T) {
	root := filepath.Join(t.TempDir(), "agui")
	s := NewFileStore(root)
	s.journalSize = 128 << 10
	const threads = 12 * syncWorkers
	for i := range threads {
		saveSeq(t, s, sampleThread(fmt.Sprintf("thread-%d", i)), int64(i))
	}
	if s.journal.seq < 2 {
		t.Fatalf("%d activations, want rotations", s.journal.seq)
	}
	crash(t, s)
	s2 := NewFileStore(root)
	s2.journalSize = 128 << 10
	for i := range threads {
		if got := mustLoad(t, s2, fmt.Sprintf("thread-%d", i)).Execution.PipelineSequence; got != int64(i) {
			t.Fatalf("thread-%d: sequence %d, want %d", i, got, i)
		}
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if e := journalEpochs(t, root); e != [2]uint64{} {
		t.Fatalf("journal epochs %v after Close, want empty", e)
	}
}
