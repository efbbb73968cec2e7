package filestore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// An earlier version of this gateway kept two more directories beside
// threads/: <root>/.spare (empty files it reused for its writes; nothing
// of value) and <root>/.journal (a write-ahead log of its saves, which it
// applied to the thread files at its next start and emptied on a graceful
// stop). RetireLegacy removes both once nothing in them is needed, so that
// the state directory holds only what the original's holds.
const (
	legacySpareDir   = ".spare"
	legacyJournalDir = ".journal"
)

// ErrLegacyJournal is wrapped by RetireLegacy's error when <root>/.journal
// holds saves its thread files do not have.
var ErrLegacyJournal = errors.New("the state directory holds saves of an earlier iac-code-agui version that its thread files do not have")

// RetireLegacy removes <root>/.spare and <root>/.journal, which an earlier
// version of this gateway left (docs/decisions.md, "Leftovers of the
// journal"). A journal that still holds a document that is not, byte for
// byte, in its thread's file is left in place and reported as an error
// wrapping ErrLegacyJournal, naming the threads' files: replaying it could
// overwrite what another program (the original adapter) wrote since, and
// dropping it could lose a save a client saw, so the operator decides. It
// reads only the journal and the files it names; a root without either
// directory costs two lstat calls.
func (s *Store) RetireLegacy() error {
	journal := filepath.Join(s.root, legacyJournalDir)
	if _, err := os.Lstat(journal); err == nil {
		missing, err := s.unappliedJournal(journal)
		if err != nil {
			return fmt.Errorf("reading %s: %w", journal, err)
		}
		if len(missing) > 0 {
			return fmt.Errorf("%w: %d thread files (%s) differ from their last save in %s; start the earlier version once and stop it with SIGTERM to apply it, or move %s away to keep the thread files as they are",
				ErrLegacyJournal, len(missing), summarise(missing), journal, journal)
		}
		if err := os.RemoveAll(journal); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.RemoveAll(filepath.Join(s.root, legacySpareDir)); err != nil {
		return err
	}
	return nil
}

// summarise lists at most three names.
func summarise(names []string) string {
	slices.Sort(names)
	if len(names) > 3 {
		return fmt.Sprintf("%s, %s, %s and %d more", names[0], names[1], names[2], len(names)-3)
	}
	return fmt.Sprint(names)
}

// The journal's layout, read-only here (little-endian): two files, "0" and
// "1". Header, 32 bytes: "IACJRNL1", activation sequence (8), epoch (8; 0
// when the file is empty), 4 zero bytes, CRC-32C of the 28 bytes before.
// Records from offset 32: body length (4), epoch (8), CRC-32C of those 12
// bytes and the body (4), body. Body: thread id length (2) and id, length
// (1) and text of the revision the save replaced, time (8), document. A
// file's records run while their epoch is its header's and their CRC
// matches.
var (
	journalMagic = []byte("IACJRNL1")
	castagnoli   = crc32.MakeTable(crc32.Castagnoli)
)

const (
	journalHeader = 32
	recordHead    = 16
)

// unappliedJournal returns the base names of the thread files that do not
// hold their thread's last journaled document, in the order of the files'
// activation.
func (s *Store) unappliedJournal(dir string) ([]string, error) {
	type file struct {
		seq  uint64
		last map[string][]byte
	}
	var files []file
	for _, name := range []string{"0", "1"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(data) < journalHeader || !bytes.Equal(data[:8], journalMagic) ||
			binary.LittleEndian.Uint32(data[28:]) != crc32.Checksum(data[:28], castagnoli) {
			// A torn header: the earlier version was activating the file
			// (its records were never acknowledged) or emptying it (they
			// were applied).
			continue
		}
		seq, epoch := binary.LittleEndian.Uint64(data[8:]), binary.LittleEndian.Uint64(data[16:])
		if epoch != 0 {
			files = append(files, file{seq, lastDocuments(data, epoch)})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return cmp.Compare(a.seq, b.seq) })
	last := map[string][]byte{}
	for _, f := range files {
		for id, doc := range f.last {
			last[id] = doc
		}
	}
	var missing []string
	for id, doc := range last {
		path, err := s.Path(id)
		if err != nil {
			continue // no file can hold it; the earlier version wrote none
		}
		if have, err := readNoFollow(path); err != nil || !bytes.Equal(have, doc) {
			missing = append(missing, filepath.Base(path))
		}
	}
	return missing, nil
}

// lastDocuments returns the last document of each thread among the
// records of one journal file.
func lastDocuments(data []byte, epoch uint64) map[string][]byte {
	last := map[string][]byte{}
	for off := journalHeader; len(data)-off >= recordHead; {
		h := data[off : off+recordHead]
		n := int(binary.LittleEndian.Uint32(h))
		if binary.LittleEndian.Uint64(h[4:]) != epoch || n > len(data)-off-recordHead {
			break
		}
		body := data[off+recordHead : off+recordHead+n]
		if crc32.Update(crc32.Checksum(h[:12], castagnoli), castagnoli, body) != binary.LittleEndian.Uint32(h[12:]) {
			break
		}
		if len(body) < 2 {
			break
		}
		idLen := int(binary.LittleEndian.Uint16(body))
		if len(body) < 2+idLen+1 {
			break
		}
		id := string(body[2 : 2+idLen])
		rest := body[2+idLen:]
		revLen := int(rest[0])
		if len(rest) < 1+revLen+8 {
			break
		}
		last[id] = rest[1+revLen+8:]
		off += recordHead + n
	}
	return last
}
