//go:build !linux

package server

// hangups is the watcher of hangup_linux.go; elsewhere each parked stream
// watches its connection with a goroutine of its own.
type hangups struct{}

var watcher = &hangups{}

func (*hangups) watch(*parkedStream) bool { return false }
func (*hangups) forget(*parkedStream)     {}
