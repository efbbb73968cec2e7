package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// open replays and opens the journal once, before the store's first load
// or save (journal_replay.go). A failure is that request's, as
// ErrUnavailable; the next one tries again.
func (s *FileStore) open() error {
	if s.opened.Load() {
		return nil
	}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	if s.opened.Load() {
		return nil
	}
	if err := s.recoverJournal(); err != nil {
		return fmt.Errorf("%w: journal: %w", ErrUnavailable, err)
	}
	s.opened.Store(true)
	return nil
}

// recoverJournal opens an existing journal, writes what it holds to the
// thread files and marks it empty.
func (s *FileStore) recoverJournal() error {
	if s.journalOff {
		return nil
	}
	if _, err := os.Lstat(s.journalDir()); errors.Is(err, fs.ErrNotExist) {
		return nil // the first save makes it
	}
	j, err := s.startJournal()
	if errors.Is(err, errJournalBusy) {
		s.journalOff = true
		return nil
	}
	if err != nil {
		return err
	}
	s.journal = j
	return nil
}

// startJournal opens (or makes) the journal, replays what it holds and
// marks it empty.
func (s *FileStore) startJournal() (*journal, error) {
	j, err := openJournal(s.journalDir(), s.journalSize, s.syncDirs())
	if err != nil {
		return nil, err
	}
	recs, err := j.records()
	if err == nil {
		err = s.replay(recs)
	}
	for _, jf := range j.files {
		if err == nil && jf.epoch != 0 {
			err = j.writeHeader(jf, jf.seq, 0)
		}
	}
	if err != nil {
		j.closeFiles()
		return nil, err
	}
	return j, nil
}

func (s *FileStore) journalDir() string { return filepath.Join(s.root, journalDirName) }

// syncDirs are the directories a checkpoint syncs: the threads' and the
// spares' (a swap moves names in both).
func (s *FileStore) syncDirs() []string {
	return []string{s.threads, s.commits.spares.dir}
}

// journalFor returns the journal a batch writes to with the size of its
// records, or nil when the batch goes without one: no journal here, or
// records too large for it.
func (s *FileStore) journalFor(order []*target) (*journal, int) {
	if s.journalOff {
		return nil, 0
	}
	if s.journal == nil {
		// Made here, by the first save; one made meanwhile by another
		// process is replayed like one found at the start.
		j, err := s.startJournal()
		if err != nil {
			// Held by another process, or not possible here: every save
			// syncs its own files, as without a journal.
			s.journalOff = true
			return nil, 0
		}
		s.journal = j
	}
	n := 0
	for _, t := range order {
		if len(t.threadID) > 0xffff || len(t.stored) > 0xff {
			return nil, 0 // beyond what a record holds
		}
		n += recordSize(t.threadID, t.stored, t.data)
	}
	if !s.journal.fits(n) {
		return nil, 0
	}
	return s.journal, n
}

// commitJournaled writes a compared batch for which j has room: the
// records of its documents, synced while the documents are written (not
// in place); then each document put in place, without a sync. The records
// are durable before any document is in place, so after a power loss a
// thread file swapped in before its bytes reached the disk is repaired
// from its record (journal_replay.go). A record whose document then fails
// is forgotten (the journal checkpointed) before that save is answered, so
// that no crash can replay it.
func (s *FileStore) commitJournaled(order []*target, j *journal) {
	if err := j.write(order, time.Now().UnixNano()); err != nil {
		// Nothing relies on what was written: the batch goes without the
		// journal.
		_ = s.dropJournal()
		s.commitSynced(order)
		return
	}
	var syncErr error
	if len(order) <= inlineSync {
		// A small batch writes its documents, then syncs, on this
		// goroutine: handing the sync to another one costs two wake-ups
		// between threads, more than the writing it would overlap.
		s.writeDocuments(order)
		syncErr = j.sync()
	} else {
		synced := make(chan error, 1)
		go func() { synced <- j.sync() }()
		s.writeDocuments(order)
		syncErr = <-synced
	}
	forget := false
	if syncErr != nil {
		for _, t := range order {
			if t.err == nil {
				t.err = syncErr
			}
		}
		_ = s.dropJournal()
	}
	for _, t := range order {
		t.crashAt("temp")
	}
	for _, t := range order {
		if t.err != nil {
			s.discard(t)
			forget = true
			continue
		}
		if t.err = s.replace(t); t.err != nil {
			forget = true
		}
		t.crashAt("renamed")
	}
	if forget && s.journal != nil {
		if err := j.forget(); err != nil {
			_ = s.dropJournal()
		}
	}
	for _, t := range order {
		t.finish()
	}
}

// inlineSync is the largest batch that syncs its journal records after
// writing its documents instead of while writing them.
const inlineSync = 2

// writeDocuments writes the new documents of a journaled batch, not
// synced (a checkpoint syncs them).
func (s *FileStore) writeDocuments(order []*target) {
	for _, t := range order {
		s.writeDocument(t)
		t.closeFile(nil)
	}
}

// dropJournal stops using the journal: what it covers is synced if
// possible (the error says if not), and later saves sync their own files.
// A journal that failed is dropped with its error ignored; Close reports
// it.
func (s *FileStore) dropJournal() error {
	err := s.journal.close()
	s.journal, s.journalOff = nil, true
	return err
}
