package state

import (
	"cmp"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"time"
)

// journalRecord is one journaled save.
type journalRecord struct {
	threadID string
	prev     Revision // what the save replaced
	at       time.Time
	data     []byte
}

// records returns the records of both files in the order they were
// written, and notes the highest activation sequence.
func (j *journal) records() ([]journalRecord, error) {
	type live struct {
		seq  uint64
		recs []journalRecord
	}
	var files []live
	for _, jf := range j.files {
		data, err := readAll(jf.f)
		if err != nil {
			return nil, err
		}
		seq, epoch, ok := parseHeader(data)
		if !ok {
			// A torn header: the file was being activated (its records
			// were never acknowledged) or marked empty (they were
			// checkpointed). Either way nothing in it is needed.
			continue
		}
		jf.seq, jf.epoch = seq, epoch
		j.seq = max(j.seq, seq)
		if epoch != 0 {
			files = append(files, live{seq, parseRecords(data, epoch)})
		}
	}
	slices.SortFunc(files, func(a, b live) int { return cmp.Compare(a.seq, b.seq) })
	var all []journalRecord
	for _, f := range files {
		all = append(all, f.recs...)
	}
	return all, nil
}

// readAll reads f from its start.
func readAll(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, st.Size())
	n, err := f.ReadAt(data, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return data[:n], nil
}

// parseHeader returns the sequence and epoch of a valid header.
func parseHeader(data []byte) (seq, epoch uint64, ok bool) {
	if len(data) < journalHeaderSize || [8]byte(data[:8]) != journalMagic ||
		binary.LittleEndian.Uint32(data[28:]) != crc32.Checksum(data[:28], castagnoli) {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint64(data[8:]), binary.LittleEndian.Uint64(data[16:]), true
}

// parseRecords returns the records of epoch from offset 32 on, up to the
// first that is torn, of another epoch or malformed.
func parseRecords(data []byte, epoch uint64) []journalRecord {
	var recs []journalRecord
	off := journalHeaderSize
	for len(data)-off >= journalRecordHead {
		h := data[off : off+journalRecordHead]
		n := int(binary.LittleEndian.Uint32(h))
		if binary.LittleEndian.Uint64(h[4:]) != epoch || n > len(data)-off-journalRecordHead {
			break
		}
		body := data[off+journalRecordHead : off+journalRecordHead+n]
		if crc32.Update(crc32.Checksum(h[:12], castagnoli), castagnoli, body) != binary.LittleEndian.Uint32(h[12:]) {
			break
		}
		r, ok := parseBody(body)
		if !ok {
			break
		}
		recs = append(recs, r)
		off += journalRecordHead + n
	}
	return recs
}

func parseBody(b []byte) (journalRecord, bool) {
	if len(b) < 2 {
		return journalRecord{}, false
	}
	n := int(binary.LittleEndian.Uint16(b))
	b = b[2:]
	if len(b) < n+1 {
		return journalRecord{}, false
	}
	id := string(b[:n])
	b = b[n:]
	m := int(b[0])
	b = b[1:]
	if len(b) < m+8 {
		return journalRecord{}, false
	}
	prev := Revision(b[:m])
	at := time.Unix(0, int64(binary.LittleEndian.Uint64(b[m:])))
	return journalRecord{threadID: id, prev: prev, at: at, data: b[m+8:]}, true
}

// foreignGrace is how much later than its last journaled save a thread
// file must have been modified to count as another program's document,
// written after this process stopped.
const foreignGrace = 2 * time.Second

// replay writes, durably, the last journaled document of every thread
// whose file does not hold it, unless another program replaced that file
// since (protocol.md §8.5): a file that is missing, unreadable as this
// thread's document, a revision the journal saw, or not modified well
// after the journal's last save of it gets the journaled document.
func (s *FileStore) replay(recs []journalRecord) error {
	type chain struct {
		last    journalRecord
		lastRev Revision
		known   map[Revision]bool
	}
	chains := map[string]*chain{}
	var ids []string
	for _, r := range recs {
		c := chains[r.threadID]
		if c == nil {
			c = &chain{known: map[Revision]bool{}}
			chains[r.threadID] = c
			ids = append(ids, r.threadID)
		}
		c.last, c.lastRev = r, revisionOf(r.data)
		c.known[r.prev] = true
		c.known[c.lastRev] = true
	}
	var order []*target
	for _, id := range ids {
		c := chains[id]
		path, err := s.Path(id)
		if err != nil {
			continue
		}
		if want, existed := s.replayWanted(path, id, c.last, c.lastRev, c.known); want {
			order = append(order, &target{path: path, threadID: id, existed: existed, data: c.last.data, durable: true})
		}
	}
	if len(order) == 0 {
		return nil
	}
	if err := s.ensureDirs(); err != nil {
		return err
	}
	// Written as a save without the journal writes. The committer's state
	// (its spares) is free: no batch runs before the journal is open, as
	// every save waits in open (or this runs in the committer itself, for
	// a journal the first save makes).
	s.commitSynced(order)
	for _, t := range order {
		if t.err != nil {
			return t.err
		}
	}
	return nil
}

// replayWanted reports whether the file at path needs the journaled
// document last (whose revision is lastRev), and whether a file is there.
func (s *FileStore) replayWanted(path, threadID string, last journalRecord, lastRev Revision, known map[Revision]bool) (want, existed bool) {
	data, err := s.read(path)
	switch {
	case errors.Is(err, ErrNotFound):
		return true, false
	case err != nil:
		// A symlink, FIFO or hard link stays refused as before; an I/O
		// error leaves the thread unavailable as before.
		return false, true
	}
	rev := revisionOf(data)
	if rev == lastRev {
		return false, true
	}
	if known[rev] {
		return true, true
	}
	if _, err := decodeThread(data, threadID); err != nil {
		// Torn, or another thread's document in a spare that was swapped
		// in before its new content reached the disk.
		return true, true
	}
	// A document of this thread the journal never saw: an old one in such
	// a spare, or another program's, written after this process stopped.
	fi, err := os.Lstat(path)
	return err != nil || !fi.ModTime().After(last.at.Add(foreignGrace)), true
}
