//go:build unix

package filestore

import (
	"io/fs"
	"syscall"
)

// oNoFollow makes open fail on a symlink leaf instead of following it.
const oNoFollow = syscall.O_NOFOLLOW

// dirSyncSupported: fsync of a directory commits a rename on Unix.
const dirSyncSupported = true

// oNonBlock keeps open from waiting on a FIFO.
const oNonBlock = syscall.O_NONBLOCK

// linkCount is the number of hard links of a file.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
