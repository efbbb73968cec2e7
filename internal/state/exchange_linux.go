//go:build linux

package state

import "golang.org/x/sys/unix"

// exchange swaps the names from and to in one atomic step
// (renameat2 RENAME_EXCHANGE): to gets from's file and from gets the
// file to had, which is kept as the next spare instead of being freed.
func exchange(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_EXCHANGE)
}
