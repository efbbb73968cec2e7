//go:build unix

package state

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f for this process, without
// waiting: errJournalBusy when another process holds it. The lock goes
// with the file's close.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errJournalBusy
	}
	return err
}
