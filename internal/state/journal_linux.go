//go:build linux

package state

import (
	"os"
	"syscall"
)

// datasync makes f's data durable, and of its metadata what reading it
// back needs (its size), not its times.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
