//go:build unix

package a2a

import (
	"net"
	"syscall"
)

// readNow reads what the socket already holds, without waiting (Go's
// sockets are non-blocking): n > 0 bytes, 0 when nothing arrived, -1 at
// the end of the stream or on an error.
func readNow(nc net.Conn, p []byte) int {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	err = rc.Read(func(fd uintptr) bool {
		m, rerr := syscall.Read(int(fd), p)
		switch {
		case rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK:
			n = 0
		case rerr == nil && m > 0:
			n = m
		}
		return true
	})
	if err != nil {
		return -1
	}
	return n
}
