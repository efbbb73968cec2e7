//go:build !linux

package state

import "os"

// datasync makes f durable.
func datasync(f *os.File) error { return f.Sync() }
