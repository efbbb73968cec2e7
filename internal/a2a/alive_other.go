//go:build !unix

package a2a

import "net"

// readNow cannot read without waiting here: connections are not reused.
func readNow(net.Conn, []byte) int { return -1 }
