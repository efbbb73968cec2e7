//go:build !linux

package state

// exchange is Linux only; elsewhere every save writes a new file.
func exchange(from, to string) error {
	return errExchangeUnsupported
}
