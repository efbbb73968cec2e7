package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// stalledRun posts body on a raw connection whose receive buffer is small
// and returns the connection without reading from it: a client that
// stopped reading.
func stalledRun(t *testing.T, url string, body any) net.Conn {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(raw), raw); err != nil {
		t.Fatal(err)
	}
	return conn
}

// runEnded waits for the "run ended" log line of a thread and returns it.
func runEnded(t *testing.T, e *env, threadID string, within time.Duration) map[string]any {
	t.Helper()
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(e.Logs.String(), "\n") {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == "run ended" && l["threadId"] == threadID {
				return l
			}
		}
	}
	t.Fatalf("no \"run ended\" line for %s within %v", threadID, within)
	return nil
}

// TestStalledReaderIsDisconnected: a client that stops reading a run that
// keeps writing is disconnected once a write has waited the stream write
// timeout, with the semantics of any disconnect (protocol.md §9.1): the
// run ends "disconnected", its A2A task is cancelled, and the thread takes
// a new turn.
func TestStalledReaderIsDisconnected(t *testing.T) {
	const bound = 500 * time.Millisecond
	e := newEnv(t, envOptions{streamWriteTimeout: bound, logs: true})
	const th = "thread-stalled"
	start := time.Now()
	stalledRun(t, e.URL, e.body(th, "run-1", "flood 1000000", nil))
	l := runEnded(t, e, th, 30*time.Second)
	if l["outcome"] != "disconnected" {
		t.Fatalf("run ended %v, want outcome disconnected", l)
	}
	// The run wrote until the buffers filled, then one write waited the
	// bound: released after it, long before the flood's end.
	if d := time.Since(start); d < bound {
		t.Fatalf("released after %v, before the %v bound", d, bound)
	}
	waitUntil(t, func() bool { return cancelled(e) })
	if r := post(t, e.URL, e.body(th, "run-2", "hello", nil), nil); r.Status != 200 || last(r.Events)["type"] != "RUN_FINISHED" {
		t.Fatalf("next turn after the disconnect: %d %v", r.Status, types(r.Events))
	}
}

// cancelled reports whether the agent received a CancelTask call.
func cancelled(e *env) bool {
	for _, c := range e.Agent.Calls() {
		if c.Method == "CancelTask" {
			return true
		}
	}
	return false
}

// TestStalledReaderKeepsInterrupt: a client that pauses longer than the
// stream write timeout after a run ended with an interrupt loses nothing:
// the interrupt was written (into the socket buffers), no task is
// cancelled, and when the client reads on it finds the whole answer and
// resumes (protocol.md §9.1: an interrupt does not depend on its stream).
func TestStalledReaderKeepsInterrupt(t *testing.T) {
	const bound = 500 * time.Millisecond
	e := newEnv(t, envOptions{streamWriteTimeout: bound, logs: true})
	const th = "thread-stalled-perm"
	conn := stalledRun(t, e.URL, e.body(th, "run-1", "Deploy it (permission)", nil))
	if l := runEnded(t, e, th, 30*time.Second); l["outcome"] != "interrupt" {
		t.Fatalf("run ended %v, want outcome interrupt", l)
	}
	// Elapsed time is what is tested: the client stays away for longer
	// than the bound.
	time.Sleep(2 * bound)
	_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("the interrupted run's answer was cut: %v", err)
	}
	r := &response{Status: res.StatusCode, Raw: string(raw), Events: parseSSE(t, string(raw))}
	its := interrupts(t, r)
	if cancelled(e) {
		t.Fatal("a paused run's task was cancelled")
	}
	ok := resumeBody(e, th, "run-2", map[string]any{"interruptId": its[0]["id"], "status": "resolved", "payload": map[string]any{"decision": "allow_once"}})
	fin := last(post(t, e.URL, ok, nil).Events)
	if fin["type"] != "RUN_FINISHED" || fin["outcome"].(map[string]any)["type"] != "success" {
		t.Fatalf("resume after the pause: %v", fin)
	}
}
