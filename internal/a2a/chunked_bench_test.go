package a2a

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
)

// chunkedBody is a whole HTTP/1.1 SSE answer with each frame in its own
// chunk, as an upstream that flushes every event sends it (uvicorn writes
// one chunk per send).
func chunkedBody(n int) []byte {
	var buf bytes.Buffer
	buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
	frame := "data: " + benchFrame + "\r\n\r\n"
	for range n {
		fmt.Fprintf(&buf, "%x\r\n%s\r\n", len(frame), frame)
	}
	buf.WriteString("0\r\n\r\n")
	return buf.Bytes()
}

// BenchmarkStreamLoopbackChunked reads frames sent one chunk each through
// the client's Transport: the read buffer of the upstream connection
// bounds how many chunks one read system call brings.
func BenchmarkStreamLoopbackChunked(b *testing.B) {
	const frames = 10000
	resp := chunkedBody(frames)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if _, err := conn.Write(resp); err != nil {
						return
					}
				}
			}()
		}
	}()
	readStreams(b, New("http://"+ln.Addr().String(), ""), frames, len(resp))
}
