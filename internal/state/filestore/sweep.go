package filestore

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// tempName matches the temporary files writeAtomic creates (atomic.go):
// ".<key>.json.<8 random characters>.tmp".
var tempName = regexp.MustCompile(`^\..+\.json\.[a-z0-9_]{8}\.tmp$`)

// StaleTempAge is how old a temporary file must be before RemoveStaleTemps
// removes it: a write takes milliseconds, so an older one was left by a
// process that died between creating and renaming it.
const StaleTempAge = 5 * time.Second

// RemoveStaleTemps deletes the temporary files a killed process left in
// threads/ (protocol.md §8.5): regular files named like writeAtomic's and
// older than olderThan. Symbolic links, directories and any other name are
// left alone, and threads/ itself must be a real directory. It returns how
// many files it removed; a missing threads/ is no error.
func (s *Store) RemoveStaleTemps(olderThan time.Duration) (int, error) {
	if err := s.checkThreadsDir(); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	d, err := os.Open(s.threads)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	removed := 0
	var firstErr error
	for {
		// In batches, unsorted: a directory of 100,000 threads costs
		// neither their names' memory at once nor a sort.
		entries, err := d.ReadDir(256)
		for _, e := range entries {
			// DirEntry's type comes from lstat: a symlink is never followed.
			if !e.Type().IsRegular() || !tempName.MatchString(e.Name()) {
				continue
			}
			path := filepath.Join(s.threads, e.Name())
			fi, err := os.Lstat(path)
			if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) < olderThan {
				continue
			}
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			removed++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			break
		}
	}
	return removed, firstErr
}
