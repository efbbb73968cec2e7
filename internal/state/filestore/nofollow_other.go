//go:build !unix

package filestore

import "io/fs"

// oNoFollow is zero where the flag does not exist; the Lstat checks before
// each open and write still refuse a symlink.
const oNoFollow = 0

// dirSyncSupported: the original skips the directory fsync on Windows.
const dirSyncSupported = false

// oNonBlock is zero where the flag does not exist.
const oNonBlock = 0

// linkCount is unknown here; 1 accepts the file.
func linkCount(fs.FileInfo) uint64 { return 1 }
