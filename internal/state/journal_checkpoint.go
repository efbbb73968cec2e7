package state

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"sync"
)

// A journal file's records may be dropped once every thread file they
// cover is durable: the checkpoint. The committer rotates to the other
// file when the active one is full and checkpoints the full one in the
// background; Close and a failed document checkpoint synchronously.

// forget makes every thread file the active file covers durable and marks
// it empty, so that none of its records is replayed: one of them is a
// document that did not reach its file.
func (j *journal) forget() error {
	return j.checkpoint(j.files[j.active])
}

// rotate gives the journal an active file with a new epoch: the other
// one, once its checkpoint is done, when the active one holds records
// (whose checkpoint then starts in the background); the active one itself
// when it is empty (the first batch after opening).
func (j *journal) rotate() error {
	if cur := j.files[j.active]; cur.epoch != 0 {
		if err := j.settle(j.files[1-j.active]); err != nil {
			return err
		}
		j.mu.Lock()
		cur.busy = true
		j.mu.Unlock()
		go func() {
			err := j.checkpoint(cur)
			j.mu.Lock()
			cur.busy, cur.err = false, err
			j.done.Broadcast()
			j.mu.Unlock()
		}()
		j.active = 1 - j.active
	}
	next := j.files[j.active]
	j.seq++
	var e [8]byte
	_, _ = rand.Read(e[:]) // never fails (Go >= 1.24)
	// Durable with the first batch's records: the caller syncs the file.
	if err := j.putHeader(next, j.seq, binary.LittleEndian.Uint64(e[:])|1); err != nil {
		return err
	}
	next.off = journalHeaderSize
	return nil
}

// settle waits for jf's background checkpoint and, if it failed, runs it
// again here.
func (j *journal) settle(jf *journalFile) error {
	j.mu.Lock()
	for jf.busy {
		j.done.Wait()
	}
	err := jf.err
	jf.err = nil
	j.mu.Unlock()
	if err != nil || jf.epoch != 0 {
		return j.checkpoint(jf)
	}
	return nil
}

// checkpoint syncs every thread file jf covers, then the directories,
// then marks jf empty.
func (j *journal) checkpoint(jf *journalFile) error {
	paths := make(chan string)
	errs := make(chan error, syncWorkers)
	var wg sync.WaitGroup
	// A forget after a failed document covers a batch or two: no more
	// workers than files.
	for range min(syncWorkers, len(jf.dirty)) {
		wg.Go(func() {
			var first error
			for p := range paths {
				if err := syncFile(p); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		})
	}
	for p := range jf.dirty {
		paths <- p
	}
	close(paths)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	for _, d := range j.syncDirs {
		if err := syncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := j.writeHeader(jf, jf.seq, 0); err != nil {
		return err
	}
	jf.dirty = map[string]struct{}{}
	return nil
}

// syncFile syncs the file at path; a file gone since is no error (a
// later save replaced it and is journaled).
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// close checkpoints both files and closes them; the journal is not used
// after.
func (j *journal) close() error {
	var first error
	for _, jf := range j.files {
		if err := j.settle(jf); err != nil && first == nil {
			first = err
		}
	}
	j.closeFiles()
	return first
}
