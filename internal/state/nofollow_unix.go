//go:build unix

package state

import "syscall"

// oNoFollow makes open fail on a symlink leaf instead of following it.
const oNoFollow = syscall.O_NOFOLLOW

// dirSyncSupported: fsync of a directory commits a rename on Unix.
const dirSyncSupported = true
