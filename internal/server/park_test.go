package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// rawPost sends body on a connection of its own and returns the response
// with its body read to the end, and whether the server then closed the
// connection.
func rawPost(t *testing.T, url string, body any) (*http.Response, []byte, bool) {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	conn, err := net.Dial("tcp", req.URL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "req-park-1")
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body) // fails on a malformed chunked body
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	// A closing server's FIN follows its last bytes at once; a kept-alive
	// connection stays silent.
	_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, err = br.ReadByte()
	return res, b, err == io.EOF
}

// TestParkedStreamIsTheSameStream: a parked run answers the same status,
// headers (but "Connection: close") and events as one net/http serves, in
// a well-formed chunked body, closes the connection after it, and writes
// its access-log line (status 200, the body's size) when it has ended.
func TestParkedStreamIsTheSameStream(t *testing.T) {
	var logs e2etest.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	parked := newEnv(t, envOptions{parkAbove: -1, logger: logger})
	plain := newEnv(t, envOptions{})
	res, body, closed := rawPost(t, parked.URL, parked.body("thread-park", "run-1", "hello", nil))
	want, wantBody, wantClosed := rawPost(t, plain.URL, plain.body("thread-park", "run-1", "hello", nil))

	if res.StatusCode != 200 || !res.Close || !closed || wantClosed {
		t.Fatalf("parked: status %d, Connection: close %v, closed %v; plain closed %v", res.StatusCode, res.Close, closed, wantClosed)
	}
	if te := res.TransferEncoding; len(te) != 1 || te[0] != "chunked" {
		t.Fatalf("transfer encoding %v, want chunked", te)
	}
	for _, k := range []string{"Content-Type", "Cache-Control", "X-Accel-Buffering", "X-Request-Id"} {
		if got, w := res.Header.Get(k), want.Header.Get(k); got != w || got == "" {
			t.Errorf("%s: %q, net/http sends %q", k, got, w)
		}
	}
	if res.Header.Get("Date") == "" {
		t.Error("no Date header")
	}
	got, exp := types(parseSSE(t, string(body))), types(parseSSE(t, string(wantBody)))
	if strings.Join(got, ",") != strings.Join(exp, ",") || exp[len(exp)-1] != "RUN_FINISHED" {
		t.Fatalf("parked events %v, want %v", got, exp)
	}
	assertParkedAccessLine(t, &logs, "run", len(body))
}

// assertParkedAccessLine waits for the access line of rawPost's request
// and checks its status 200, route and body size.
func assertParkedAccessLine(t *testing.T, logs *e2etest.Buffer, route string, bytes int) {
	t.Helper()
	var line map[string]any
	waitUntil(t, func() bool {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `"msg":"http request"`) && strings.Contains(l, "req-park-1") {
				return json.Unmarshal([]byte(l), &line) == nil
			}
		}
		return false
	})
	if line["status"] != 200.0 || line["bytes"] != float64(bytes) || line["route"] != route {
		t.Fatalf("access line %v, want status 200, %d bytes, route %s", line, bytes, route)
	}
}

// TestParkAbove: streams are parked only beyond ParkAbove open streams;
// below it the connection stays with net/http and is kept alive.
func TestParkAbove(t *testing.T) {
	e := newEnv(t, envOptions{parkAbove: 1})
	first := openStream(t, e.URL, e.body("thread-pa-1", "run-1", "stall", nil))
	first.waitFor(t, "CUSTOM")
	res, _, closed := rawPost(t, e.URL, e.body("thread-pa-2", "run-1", "hello", nil))
	if !res.Close || !closed {
		t.Fatalf("second stream: Connection: close %v, closed %v; want a parked stream", res.Close, closed)
	}
	if first.res.Close {
		t.Fatal("the first stream was parked below ParkAbove")
	}
}

// TestParkedStreamHeartbeat: a parked stream waiting on a stalled
// upstream still gets its heartbeat.
func TestParkedStreamHeartbeat(t *testing.T) {
	e := newEnv(t, envOptions{parkAbove: -1, heartbeat: 100 * time.Millisecond})
	s := openStream(t, e.URL, e.body("thread-phb", "run-1", "stall", nil))
	s.waitFor(t, "CUSTOM")
	if !s.res.Close {
		t.Fatal("the stream was not parked")
	}
	raw := readUntil(t, s.res.Body, ": heartbeat\n\n", 3*time.Second)
	if !strings.Contains(raw, ": heartbeat\n\n") {
		t.Fatalf("no heartbeat on a parked stream: %q", raw)
	}
}

// TestParkedDisconnectCancelsOrdinaryRun: a client that closes a parked
// stream's connection is a disconnect, as for net/http's own: the A2A task
// is cancelled and the thread released.
func TestParkedDisconnectCancelsOrdinaryRun(t *testing.T) {
	e := newEnv(t, envOptions{parkAbove: -1})
	s := openStream(t, e.URL, e.body("thread-pdc", "run-1", "slow", nil))
	s.waitFor(t, "TEXT_MESSAGE_CONTENT")
	if !s.res.Close {
		t.Fatal("the stream was not parked")
	}
	s.res.Body.Close()
	waitUntil(t, func() bool { return countMethod(e.Agent.Calls(), "CancelTask") == 1 })
	waitUntil(t, func() bool {
		r := post(t, e.URL, e.body("thread-pdc", "run-2-"+randSuffix(), "hello", nil), nil)
		return r.Status == 200
	})
}

// TestDrainEndsParkedStreams: Drain waits for parked streams until its
// context ends, then ends them as a disconnect (their tasks cancelled) and
// returns once they are gone.
func TestDrainEndsParkedStreams(t *testing.T) {
	e := newEnv(t, envOptions{parkAbove: -1})
	var streams []*stream
	for _, th := range []string{"thread-dr-1", "thread-dr-2"} {
		s := openStream(t, e.URL, e.body(th, "run-1", "stall", nil))
		s.waitFor(t, "CUSTOM")
		streams = append(streams, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	e.Handler.Drain(ctx)
	if d := time.Since(start); d < 200*time.Millisecond || d > 2*time.Second {
		t.Fatalf("Drain took %s, want the 200 ms of its context and a little", d)
	}
	var wg sync.WaitGroup
	for _, s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = io.Copy(io.Discard, s.res.Body) // ends: the connection is closed
		}()
	}
	wg.Wait()
	if n := countMethod(e.Agent.Calls(), "CancelTask"); n != 2 {
		t.Fatalf("CancelTask calls %d, want 2 (a drained stream is a disconnect)", n)
	}
	// Nothing is left to drain: a second call returns at once.
	start = time.Now()
	e.Handler.Drain(context.Background())
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("second Drain took %s", d)
	}
}

// readUntil reads r until want appears or d passes.
func readUntil(t *testing.T, r io.Reader, want string, d time.Duration) string {
	t.Helper()
	var raw strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for !strings.Contains(raw.String(), want) {
			n, err := r.Read(buf)
			raw.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%q not seen within %s", want, d)
	}
	return raw.String()
}

// TestParkedObservation: beyond ParkAbove open streams an observation
// (protocol.md §7.2) is parked like a run: the same events in a
// well-formed chunked body, the connection closed after it, the access
// line (route subscribe) when it has ended; and an observer that leaves a
// parked observation of a running task cancels nothing.
func TestParkedObservation(t *testing.T) {
	var logs e2etest.Buffer
	e := newEnv(t, envOptions{parkAbove: -1, logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	const th = "thread-park-observe"
	r := post(t, e.URL, e.body(th, "run-1", "run pwd, permission please", nil), nil)
	its := interrupts(t, r)
	exec := sessionOf(t, r.Events)["executionId"].(string)

	res, body, closed := rawPost(t, subscribeURL(e, exec), map[string]any{"threadId": th, "runId": "run-1", "rosInvocationId": "invocation-1"})
	if res.StatusCode != 200 || !res.Close || !closed || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Connection: close %v, closed %v, Content-Type %q; want a parked stream", res.StatusCode, res.Close, closed, res.Header.Get("Content-Type"))
	}
	evs := parseSSE(t, string(body))
	fin := evs[len(evs)-1]
	out, _ := fin["outcome"].(map[string]any)
	got, _ := out["interrupts"].([]any)
	if evs[0]["type"] != "RUN_STARTED" || fin["type"] != "RUN_FINISHED" || out["type"] != "interrupt" || len(got) != 1 || got[0].(map[string]any)["id"] != its[0]["id"] {
		t.Fatalf("parked observation %v, ended %v", types(evs), fin)
	}
	assertParkedAccessLine(t, &logs, "subscribe", len(body))

	run := openStream(t, e.URL, e.body("thread-park-observe-2", "run-1", "cancel me", nil))
	sess := run.waitFor(t, "CUSTOM")["value"].(map[string]any)
	o := openStream(t, subscribeURL(e, sess["executionId"].(string)), map[string]any{"threadId": "thread-park-observe-2", "runId": "run-1", "rosInvocationId": "invocation-1"})
	o.waitFor(t, "TEXT_MESSAGE_CONTENT")
	if !o.res.Close {
		t.Fatal("the observation was not parked")
	}
	o.res.Body.Close()
	run.waitFor(t, "TEXT_MESSAGE_CONTENT")
	run.waitFor(t, "TEXT_MESSAGE_CONTENT")
	if n := countMethod(e.Agent.Calls(), "CancelTask"); n != 0 {
		t.Fatalf("an observer's disconnect cancelled the task (%d CancelTask)", n)
	}
}
