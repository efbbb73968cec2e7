package a2a

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// benchFrame is a realistic text-delta frame (upstream.md §3.4.1) with
// uuid-sized ids.
const benchFrame = `{"jsonrpc":"2.0","id":"6f1c2a9e-3b4d-4e5f-8a6b-7c8d9e0f1a2b","result":{"statusUpdate":{"taskId":"0198c7e2-5a1b-7c3d-9e4f-a0b1c2d3e4f5","contextId":"agui-3f2a9c0d1e8b7a6f5c4d3e2f1a0b9c8d7e6f5a4b","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"0198c7e2-5a1b-7c3d-9e4f-a0b1c2d3e4f5-message","contextId":"agui-3f2a9c0d1e8b7a6f5c4d3e2f1a0b9c8d7e6f5a4b","taskId":"0198c7e2-5a1b-7c3d-9e4f-a0b1c2d3e4f5","role":"ROLE_AGENT","parts":[{"text":"Here is the Terraform template for the VPC "}]}},"metadata":{"iac_code":{"iacCodeSessionId":"5b8e1f0a-2c3d-4e5f-9a8b-7c6d5e4f3a2b"}}}}}`

func sseBody(n int) []byte {
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		buf.WriteString("data: ")
		buf.WriteString(benchFrame)
		buf.WriteString("\r\n\r\n")
		if i%100 == 0 {
			buf.WriteString(": ping\r\n\r\n")
		}
	}
	return buf.Bytes()
}

func BenchmarkStreamRead(b *testing.B) {
	const frames = 1000
	body := sseBody(frames)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		s := &Stream{sse: newSSEReader(bytes.NewReader(body), DefaultMaxFrameBytes), cl: &call{ctx: context.Background(), done: func() {}}}
		n := 0
		for {
			_, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != frames {
			b.Fatalf("read %d frames", n)
		}
	}
	b.ReportMetric(float64(frames*b.N)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkStreamReadBuffered reads like the adapter does, asking
// Buffered after every frame (CRLF framing, as iac-code sends).
func BenchmarkStreamReadBuffered(b *testing.B) {
	const frames = 1000
	body := sseBody(frames)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		s := &Stream{sse: newSSEReader(bytes.NewReader(body), DefaultMaxFrameBytes), cl: &call{ctx: context.Background(), done: func() {}}}
		n, held := 0, 0
		for {
			_, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
			if s.Buffered() {
				held++
			}
		}
		if n != frames || held < frames/2 {
			b.Fatalf("read %d frames, %d with the next one buffered", n, held)
		}
	}
	b.ReportMetric(float64(frames*b.N)/b.Elapsed().Seconds(), "frames/s")
}

func BenchmarkStreamLoopback(b *testing.B) {
	const frames = 10000
	body := sseBody(frames)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	readStreams(b, New(srv.URL, ""), frames, len(body))
}

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
// the client's Transport: its read buffer bounds how many chunks one read
// system call brings.
func BenchmarkStreamLoopbackChunked(b *testing.B) {
	const frames = 10000
	resp := chunkedBody(frames)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
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
			})
		}
	})
	c := New("http://"+ln.Addr().String(), "")
	readStreams(b, c, frames, len(resp))
	c.CloseIdleConnections()
	ln.Close()
	wg.Wait()
}

// readStreams subscribes b.N times through c, reads every frame of each
// stream, checks there were frames of them and reports frames/s.
func readStreams(b *testing.B, c *Client, frames, size int) {
	b.ReportAllocs()
	b.SetBytes(int64(size))
	for b.Loop() {
		s, err := c.SubscribeToTask(context.Background(), "T")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		s.Close()
		if n != frames {
			b.Fatalf("read %d frames", n)
		}
	}
	b.ReportMetric(float64(frames*b.N)/b.Elapsed().Seconds(), "frames/s")
}
