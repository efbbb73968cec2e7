package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// The journal makes a file store's saves durable with one data sync of an
// already allocated file per batch, instead of a sync of every new
// document plus one of the directory (protocol.md §8.5): a batch appends
// its documents to the active journal file, replaces the thread files
// without syncing them, and syncs the journal before it answers. A
// checkpoint later syncs the thread files a journal file covers and then
// marks it empty; a start after a crash first writes every journaled
// document that did not reach its thread file (journal_replay.go).
//
// Two files, <root>/.journal/0 and 1, take turns: while one is written,
// the other's checkpoint runs in the background. A file is zero-filled as
// it first grows, so that appending to it later changes no metadata and
// its sync is one write of data.
//
// Layout, little-endian. Header (32 bytes at offset 0): "IACJRNL1", the
// activation sequence (8 bytes), the epoch (8 bytes, random per
// activation, 0 when the file is empty), 4 zero bytes, CRC-32C of the 28
// bytes before it. Records follow from offset 32: body length (4), epoch
// (8), CRC-32C of those 12 bytes and the body (4), body. Body: thread id
// length (2) and thread id, the revision the save replaced (1-byte length
// and text), the time of the save (8, Unix nanoseconds), the document.
// Replay reads a file's records while their epoch is the header's and
// their CRC matches; a reused file's older records carry an older epoch.

const (
	journalDirName = ".journal"
	// defaultJournalSize bounds each journal file: about 5,000 saves of a
	// typical document between checkpoints.
	defaultJournalSize = 8 << 20
	journalHeaderSize  = 32
	journalRecordHead  = 16
	// maxJournalBuf bounds the record buffer kept between batches.
	maxJournalBuf = 1 << 20
	// journalGrow is the step in which a journal file is zero-filled:
	// about 50 saves of a typical document.
	journalGrow = 64 << 10
)

var (
	journalMagic = [8]byte{'I', 'A', 'C', 'J', 'R', 'N', 'L', '1'}
	castagnoli   = crc32.MakeTable(crc32.Castagnoli)
	// errJournalBusy means another process holds the journal: that store
	// writes without one.
	errJournalBusy = errors.New("journal held by another process")
)

// journalFile is one of the two journal files.
type journalFile struct {
	f     *os.File
	seq   uint64 // activation order
	epoch uint64 // 0: empty
	size  int64  // bytes known allocated
	off   int64  // where the next record goes while active
	// dirty holds the thread files written while the file was active; its
	// checkpoint syncs them.
	dirty map[string]struct{}
	busy  bool  // a background checkpoint runs (guarded by journal.mu)
	err   error // the last background checkpoint's failure (journal.mu)
}

// journal is a FileStore's pair of journal files. The committer owns the
// active file; a checkpoint goroutine owns the other while it runs.
type journal struct {
	files    [2]*journalFile
	active   int
	seq      uint64 // the highest activation sequence seen
	limit    int64  // the size of each file
	syncDirs []string
	mu       sync.Mutex
	done     *sync.Cond // signalled when a checkpoint ends
	zeros    []byte
	buf      []byte // the records of the batch being written (write)
}

// openJournal opens the journal in dir, making what is missing of it,
// and locks it for this process: errJournalBusy when another process
// holds it.
func openJournal(dir string, limit int64, syncDirs []string) (*journal, error) {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	if err := narrowMode(dir); err != nil {
		return nil, err
	}
	j := &journal{limit: limit, syncDirs: syncDirs}
	j.done = sync.NewCond(&j.mu)
	if err := j.openFiles(dir); err != nil {
		j.closeFiles()
		return nil, err
	}
	return j, nil
}

// openFiles opens, locks and checks the two files in dir, writing the
// header of a new one; the caller closes what was opened on failure.
func (j *journal) openFiles(dir string) error {
	made := false
	for i := range j.files {
		name := filepath.Join(dir, fmt.Sprint(i))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|oNoFollow|oNonBlock, 0o600)
		if err != nil {
			return err
		}
		jf := &journalFile{f: f, dirty: map[string]struct{}{}}
		j.files[i] = jf
		if i == 0 {
			// The first file's lock stands for the pair.
			if err := lockFile(f); err != nil {
				return err
			}
		}
		st, err := f.Stat()
		if err == nil && (!st.Mode().IsRegular() || linkCount(st) != 1) {
			err = fmt.Errorf("%s is not a private regular file", filepath.Base(name))
		}
		if err != nil {
			return err
		}
		jf.size = st.Size()
		if jf.size < journalHeaderSize {
			// New: an empty header, durable before the file is relied on.
			if err := j.writeHeader(jf, 0, 0); err != nil {
				return err
			}
			made = true
		}
	}
	if made {
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if err := syncDir(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// closeFiles closes the open files (and so drops the lock).
func (j *journal) closeFiles() {
	for _, jf := range j.files {
		if jf != nil {
			_ = jf.f.Close()
		}
	}
}

// writeHeader writes jf's header and syncs it.
func (j *journal) writeHeader(jf *journalFile, seq, epoch uint64) error {
	if err := j.putHeader(jf, seq, epoch); err != nil {
		return err
	}
	return datasync(jf.f)
}

// putHeader writes jf's header without syncing it.
func (j *journal) putHeader(jf *journalFile, seq, epoch uint64) error {
	var h [journalHeaderSize]byte
	copy(h[:8], journalMagic[:])
	binary.LittleEndian.PutUint64(h[8:], seq)
	binary.LittleEndian.PutUint64(h[16:], epoch)
	binary.LittleEndian.PutUint32(h[28:], crc32.Checksum(h[:28], castagnoli))
	if _, err := jf.f.WriteAt(h[:], 0); err != nil {
		return err
	}
	jf.seq, jf.epoch = seq, epoch
	jf.size = max(jf.size, journalHeaderSize)
	return nil
}

// fits reports whether a batch of n record bytes fits in an empty file.
func (j *journal) fits(n int) bool {
	return int64(n) <= j.limit-journalHeaderSize
}

// recordSize is the size of the record of one document.
func recordSize(threadID string, prev Revision, data []byte) int {
	return journalRecordHead + 2 + len(threadID) + 1 + len(prev) + 8 + len(data)
}

// reserve makes room for n record bytes in the active file, rotating to
// the other file when they do not fit (fits is true) and zero-filling
// what they grow the file by, so that writing them needs no new space. It
// does not sync: the file's size is made durable with the records.
func (j *journal) reserve(n int) error {
	jf := j.files[j.active]
	if jf.epoch == 0 || jf.off+int64(n) > j.limit {
		if err := j.rotate(); err != nil {
			return err
		}
		jf = j.files[j.active]
	}
	end := jf.off + int64(n)
	if end <= jf.size {
		return nil
	}
	size := min(j.limit, (end+journalGrow-1)/journalGrow*journalGrow)
	if j.zeros == nil {
		j.zeros = make([]byte, journalGrow)
	}
	for off := jf.size; off < size; {
		k := min(int64(len(j.zeros)), size-off)
		if _, err := jf.f.WriteAt(j.zeros[:k], off); err != nil {
			return err
		}
		off += k
	}
	jf.size = size
	return nil
}

// write writes the records of targets where reserve made room for them.
// It does not sync.
func (j *journal) write(order []*target, now int64) error {
	jf := j.files[j.active]
	// One buffer for every batch: a burst of saves would otherwise leave
	// its records behind as garbage, raising the heap's peak.
	buf := j.buf[:0]
	for _, t := range order {
		buf = appendRecord(buf, jf.epoch, t.threadID, t.stored, t.data, now)
	}
	if cap(buf) <= maxJournalBuf {
		j.buf = buf
	}
	if _, err := jf.f.WriteAt(buf, jf.off); err != nil {
		return err
	}
	jf.off += int64(len(buf))
	for _, t := range order {
		jf.dirty[t.path] = struct{}{}
	}
	return nil
}

// appendRecord appends one record to buf.
func appendRecord(buf []byte, epoch uint64, threadID string, prev Revision, data []byte, now int64) []byte {
	start := len(buf)
	body := recordSize(threadID, prev, data) - journalRecordHead
	buf = binary.LittleEndian.AppendUint32(buf, uint32(body))
	buf = binary.LittleEndian.AppendUint64(buf, epoch)
	buf = append(buf, 0, 0, 0, 0) // CRC, below
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(threadID)))
	buf = append(buf, threadID...)
	buf = append(buf, byte(len(prev)))
	buf = append(buf, prev...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(now))
	buf = append(buf, data...)
	crc := crc32.Update(crc32.Checksum(buf[start:start+12], castagnoli), castagnoli, buf[start+journalRecordHead:])
	binary.LittleEndian.PutUint32(buf[start+12:], crc)
	return buf
}

// sync makes the active file's records durable.
func (j *journal) sync() error {
	return datasync(j.files[j.active].f)
}
