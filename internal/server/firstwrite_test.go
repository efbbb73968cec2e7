package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestNormalRunHeadersAndRunStartedInOneWrite: a normal run's status line,
// SSE headers and RUN_STARTED leave in one write, so the client's first
// read holds all three (docs/benchmarks.md, turn latency).
func TestNormalRunHeadersAndRunStartedInOneWrite(t *testing.T) {
	e := newEnv(t, envOptions{})
	raw, err := json.Marshal(e.body("thread-first-write", "run-1", "Create a VPC template", nil))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", u.Host, len(raw), raw)
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 64<<10)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	first := string(buf[:n])
	head, body, ok := strings.Cut(first, "\r\n\r\n")
	if !ok || !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") || !strings.Contains(head, "\r\nContent-Type: text/event-stream\r\n") {
		t.Fatalf("first read %q: no complete status line and headers", first)
	}
	// Chunked: the chunk size line, then the frame.
	_, frame, _ := strings.Cut(body, "\r\n")
	want := `data: {"type":"RUN_STARTED","timestamp":`
	if !strings.HasPrefix(frame, want) || !bytes.Contains([]byte(frame), []byte(`"threadId":"thread-first-write","runId":"run-1"}`+"\n\n")) {
		t.Fatalf("first read's body %q, want RUN_STARTED of thread-first-write/run-1", body)
	}
}
