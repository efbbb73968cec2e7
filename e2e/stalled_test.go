package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStalledReaderReleased: a client with a small receive buffer that
// never reads is disconnected by the real binary once one write has
// waited --stream-write-timeout (protocol.md §4.1), with the disconnect
// semantics of §9.1: the run's outcome is logged as "disconnected" and the
// thread takes its next turn at once.
func TestStalledReaderReleased(t *testing.T) {
	const bound = time.Second
	s := startServerArgs(t, []string{"--stream-write-timeout", "1", "--log-format", "json"})
	cwd := filepath.Join(s.Root, "ws")
	raw, err := json.Marshal(runInput("thread-stalled", "run-1", "flood 1000000", cwd, nil))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(s.URL, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(raw), raw); err != nil {
		t.Fatal(err)
	}
	var ended map[string]any
	for deadline := time.Now().Add(60 * time.Second); ended == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no \"run ended\" line within 60 s:\n%s", s.out.String())
		}
		for _, line := range strings.Split(s.out.String(), "\n") {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == "run ended" && l["threadId"] == "thread-stalled" {
				ended = l
			}
		}
	}
	if ended["outcome"] != "disconnected" || ended["runId"] != "run-1" {
		t.Fatalf("run ended %v, want outcome disconnected", ended)
	}
	if d := time.Since(start); d < bound {
		t.Fatalf("released after %v, before the %v bound", d, bound)
	}
	// The stalled client still holds its connection; the thread is free.
	status, evs, body := runAGUI(t, s.URL, runInput("thread-stalled", "run-2", "hello", cwd, nil))
	if status != 200 || lastEvent(evs)["type"] != "RUN_FINISHED" {
		t.Fatalf("next turn: %d %.300s", status, body)
	}
}
