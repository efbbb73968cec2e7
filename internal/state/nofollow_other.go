//go:build !unix

package state

// oNoFollow is zero where the flag does not exist; the Lstat checks before
// each open and write still refuse a symlink.
const oNoFollow = 0

// dirSyncSupported: the original skips the directory fsync on Windows.
const dirSyncSupported = false
