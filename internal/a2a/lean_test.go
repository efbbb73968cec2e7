package a2a

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func idleConns(c *Client) int {
	c.lean.mu.Lock()
	defer c.lean.mu.Unlock()
	return len(c.lean.idle)
}

// addrServer is an upstream that records the client address of each
// streaming request and the connections it saw close.
type addrServer struct {
	*httptest.Server
	mu     sync.Mutex
	addrs  []string
	closed chan string
}

func newAddrServer(t *testing.T, h http.HandlerFunc) *addrServer {
	t.Helper()
	s := &addrServer{closed: make(chan string, 16)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.addrs = append(s.addrs, r.RemoteAddr)
		s.mu.Unlock()
		h(w, r)
	}))
	s.Config.ConnState = func(nc net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			s.closed <- nc.RemoteAddr().String()
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *addrServer) remote() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.addrs...)
}

func chunkedSSE(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	writeSSE(w, "data: "+frameText+"\r\n\r\n")
	writeSSE(w, "data: "+frameIR+"\r\n\r\n")
}

func streamOnce(t *testing.T, c *Client) []*Event {
	t.Helper()
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return readAllEvents(t, s)
}

// Two streams one after the other share one connection: the first is read
// to its end, goes to the pool and carries the second.
func TestLeanChunkedKeepAlive(t *testing.T) {
	srv := newAddrServer(t, chunkedSSE)
	c := New(srv.URL, "")
	for i := range 2 {
		if evs := streamOnce(t, c); len(evs) != 2 || evs[1].State() != StateInputRequired {
			t.Fatalf("stream %d: %d events", i, len(evs))
		}
		if n := idleConns(c); n != 1 {
			t.Fatalf("after stream %d: %d idle connections, want 1", i, n)
		}
	}
	if a := srv.remote(); len(a) != 2 || a[0] != a[1] {
		t.Fatalf("client addresses %v, want one reused", a)
	}
	c.CloseIdleConnections()
	if n := idleConns(c); n != 0 {
		t.Fatalf("%d idle connections after CloseIdleConnections", n)
	}
	select {
	case a := <-srv.closed:
		if a != srv.remote()[0] {
			t.Fatalf("closed %s, want %s", a, srv.remote()[0])
		}
	case <-time.After(5 * time.Second):
		t.Fatal("pooled connection not closed")
	}
}

// A JSON answer with a Content-Length is read to its end and pooled.
func TestLeanContentLengthJSON(t *testing.T) {
	srv := newAddrServer(t, func(w http.ResponseWriter, _ *http.Request) {
		body := frameIR
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = io.WriteString(w, body)
	})
	c := New(srv.URL, "")
	if evs := streamOnce(t, c); len(evs) != 1 || evs[0].State() != StateInputRequired {
		t.Fatalf("events %+v", evs)
	}
	if n := idleConns(c); n != 1 {
		t.Fatalf("%d idle connections, want 1", n)
	}
}

// A non-2xx answer keeps the first 4 KiB of its chunked body; the rest is
// not read, so the connection is closed, not pooled.
func TestLeanHTTPErrorNotPooled(t *testing.T) {
	srv := newAddrServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, strings.Repeat("e", 10000))
	})
	c := New(srv.URL, "")
	_, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 503 || len(he.Body) != 4096 || he.Body[4095] != 'e' {
		t.Fatalf("err %v", err)
	}
	if n := idleConns(c); n != 0 {
		t.Fatalf("%d idle connections, want 0", n)
	}
	select {
	case <-srv.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("connection not closed")
	}
}

// rawUpstream answers every request on a connection with resp, then
// closes the connection when closeAfter is set.
func rawUpstream(t *testing.T, resp string, closeAfter bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				br := bufio.NewReader(nc)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if _, err := io.WriteString(nc, resp); err != nil || closeAfter {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// A body delimited by the end of the connection is read to its end and
// the connection is not pooled.
func TestLeanCloseDelimited(t *testing.T) {
	url := rawUpstream(t, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"+
		"data: "+frameText+"\n\ndata: "+frameIR+"\n\n", true)
	c := New(url, "")
	if evs := streamOnce(t, c); len(evs) != 2 || evs[1].State() != StateInputRequired {
		t.Fatalf("%d events", len(evs))
	}
	if n := idleConns(c); n != 0 {
		t.Fatalf("%d idle connections, want 0", n)
	}
}

// Bytes after a chunked body's end: the stream ends cleanly, but the
// connection is not reused.
func TestLeanBytesAfterBodyNotPooled(t *testing.T) {
	frame := "data: " + frameIR + "\n\n"
	url := rawUpstream(t, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
		strconv.FormatInt(int64(len(frame)), 16)+"\r\n"+frame+"\r\n0\r\n\r\nJUNK", false)
	c := New(url, "")
	if evs := streamOnce(t, c); len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
	if n := idleConns(c); n != 0 {
		t.Fatalf("%d idle connections, want 0", n)
	}
}

// An idle pooled connection the server closed is not used: the next
// stream dials a new one and succeeds.
func TestLeanServerClosedIdle(t *testing.T) {
	srv := newAddrServer(t, chunkedSSE)
	c := New(srv.URL, "")
	streamOnce(t, c)
	if n := idleConns(c); n != 1 {
		t.Fatalf("%d idle connections, want 1", n)
	}
	srv.CloseClientConnections()
	<-srv.closed
	time.Sleep(50 * time.Millisecond) // the FIN reaches the client's socket
	if evs := streamOnce(t, c); len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	if a := srv.remote(); len(a) != 2 || a[0] == a[1] {
		t.Fatalf("client addresses %v, want a new connection", a)
	}
}

// Cancelling the context unblocks a read that waits for the upstream, and
// the connection it was on is closed, not pooled.
func TestLeanCancelBlockedRead(t *testing.T) {
	srv := newAddrServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeSSE(w, "data: "+frameText+"\n\n")
		<-r.Context().Done()
	})
	c := New(srv.URL, "")
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.SendStreamingMessage(ctx, &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.Next(); done <- err }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Next = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next still blocked after cancel")
	}
	select {
	case <-srv.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("connection not closed")
	}
	if n := idleConns(c); n != 0 {
		t.Fatalf("%d idle connections, want 0", n)
	}
}

// HTTPS and injected clients keep net/http.
func TestLeanOnlyPlainHTTPDefaultClient(t *testing.T) {
	c := New("http://127.0.0.1:1/", "")
	req, _ := http.NewRequest("POST", "https://127.0.0.1:1/", nil)
	if c.leanFor(req) {
		t.Fatal("https takes the lean path")
	}
	req, _ = http.NewRequest("POST", "http://127.0.0.1:1/", nil)
	if !c.leanFor(req) {
		t.Fatal("plain http to loopback does not take the lean path")
	}
	if New("http://127.0.0.1:1/", "", WithHTTPClient(&http.Client{})).lean != nil {
		t.Fatal("an injected client has a lean pool")
	}
}

// A stream closed after its last frame, without reading the body's end,
// still gives its connection back once that end has arrived; one closed
// with frames unread does not.
func TestLeanCloseAfterLastFrame(t *testing.T) {
	srv := newAddrServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeSSE(w, "data: "+frameText+"\r\n\r\n")
		time.Sleep(20 * time.Millisecond) // the first Next returns before the rest
		writeSSE(w, "data: "+frameIR+"\r\n\r\n")
	})
	c := New(srv.URL, "")
	for i, read := range []int{2, 1} {
		s, err := c.SendStreamingMessage(context.Background(), &SendParams{})
		if err != nil {
			t.Fatal(err)
		}
		for range read {
			if _, err := s.Next(); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(50 * time.Millisecond) // the body's end reaches the socket
		s.Close()
		if _, err := s.Next(); read == 2 && !errors.Is(err, ErrStreamClosed) {
			t.Fatalf("stream %d: Next after Close = %v", i, err)
		}
		if n, want := idleConns(c), read-1; n != want {
			t.Fatalf("stream %d, %d frames read: %d idle connections, want %d", i, read, n, want)
		}
	}
	if a := srv.remote(); len(a) != 2 || a[0] != a[1] {
		t.Fatalf("client addresses %v, want one reused", a)
	}
}

// Unary calls (CancelTask, GetTask) take the lean path too: a burst of
// them, as when many waiting streams close at once, starts no Transport
// read and write goroutines, and their connections are pooled with the
// streams' (one connection serves a stream and then every unary call
// here, one after another).
func TestLeanUnaryCalls(t *testing.T) {
	srv := newAddrServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") == "text/event-stream" {
			chunkedSSE(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"1","result":{"id":"T","contextId":"C","status":{"state":"TASK_STATE_CANCELED"}}}`)
	})
	c := New(srv.URL, "")
	streamOnce(t, c)
	for range 3 {
		ev, err := c.CancelTask(context.Background(), "T")
		if err != nil || ev.State() != StateCanceled {
			t.Fatalf("CancelTask = %+v, %v", ev, err)
		}
		if _, err := c.GetTask(context.Background(), "T", 0); err != nil {
			t.Fatalf("GetTask: %v", err)
		}
	}
	remote := srv.remote()
	if len(remote) != 7 {
		t.Fatalf("%d requests, want 7", len(remote))
	}
	for _, a := range remote[1:] {
		if a != remote[0] {
			t.Fatalf("requests came from %v, want one connection", remote)
		}
	}
	if n := idleConns(c); n != 1 {
		t.Fatalf("%d idle lean connections, want 1", n)
	}
}
