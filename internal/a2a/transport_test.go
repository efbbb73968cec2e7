package a2a

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// connTrace records, for every call made with its context, whether the
// Transport reused an idle connection.
type connTrace struct {
	mu     sync.Mutex
	reused []bool
}

func (ct *connTrace) ctx() context.Context {
	return httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			ct.mu.Lock()
			ct.reused = append(ct.reused, info.Reused)
			ct.mu.Unlock()
		},
	})
}

func (ct *connTrace) got() []bool {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return append([]bool(nil), ct.reused...)
}

// turnUpstream answers a streaming call with a text delta and the turn's
// INPUT_REQUIRED end, and a unary call with a canceled task. It records
// the client address and protocol of every request.
type turnUpstream struct {
	mu     sync.Mutex
	remote []string
	protos []string
}

func (u *turnUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	u.remote = append(u.remote, r.RemoteAddr)
	u.protos = append(u.protos, r.Proto)
	u.mu.Unlock()
	if r.Header.Get("Accept") == "text/event-stream" {
		w.Header().Set("Content-Type", "text/event-stream")
		writeSSE(w, "data: "+frameText+"\r\n\r\n")
		writeSSE(w, "data: "+frameIR+"\r\n\r\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"1","result":{"id":"T","contextId":"C","status":{"state":"TASK_STATE_CANCELED"}}}`)
}

func (u *turnUpstream) seen() (remote, protos []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.remote...), append([]string(nil), u.protos...)
}

// checkTurnThenUnary runs a stream read to its end, then three pairs of
// CancelTask and GetTask, and checks that all seven calls ran one after
// the other on one keep-alive connection.
func checkTurnThenUnary(t *testing.T, c *Client, u *turnUpstream, proto string) {
	t.Helper()
	var ct connTrace
	s, err := c.SendStreamingMessage(ct.ctx(), &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	evs := readAllEvents(t, s)
	s.Close()
	if len(evs) != 2 || evs[0].Status.Message.Text() != "Here is the " || evs[1].State() != StateInputRequired {
		t.Fatalf("stream events %+v", evs)
	}
	for range 3 {
		ev, err := c.CancelTask(ct.ctx(), "T")
		if err != nil || ev.State() != StateCanceled {
			t.Fatalf("CancelTask = %+v, %v", ev, err)
		}
		if _, err := c.GetTask(ct.ctx(), "T", 0); err != nil {
			t.Fatalf("GetTask: %v", err)
		}
	}
	reused := ct.got()
	if len(reused) != 7 || reused[0] {
		t.Fatalf("connections reused %v, want 7 calls and a new connection first", reused)
	}
	for i, r := range reused[1:] {
		if !r {
			t.Fatalf("call %d did not reuse the idle connection: %v", i+1, reused)
		}
	}
	remote, protos := u.seen()
	for i := range remote {
		if remote[i] != remote[0] || protos[i] != proto {
			t.Fatalf("requests came from %v over %v, want one %s connection", remote, protos, proto)
		}
	}
}

// A stream read to its end gives its connection back to the pool, and
// the unary calls after it (a run's CancelTask and GetTask) reuse it.
func TestKeepAliveStreamThenUnaryCalls(t *testing.T) {
	u := &turnUpstream{}
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	c := New(srv.URL, "")
	t.Cleanup(c.CloseIdleConnections)
	checkTurnThenUnary(t, c, u, "HTTP/1.1")
}

// trustServer makes the default Transport of c trust srv's certificate
// (the product trusts the system's roots; a test server has its own).
func trustServer(c *Client, srv *httptest.Server) {
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	c.hc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: roots}
}

// An HTTPS upstream takes the same Transport: frames, unary calls and
// keep-alive work as over plain HTTP, over HTTP/1.1 and, when the
// upstream offers it, HTTP/2.
func TestHTTPSUpstream(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		proto := "HTTP/1.1"
		if h2 {
			proto = "HTTP/2.0"
		}
		t.Run(proto, func(t *testing.T) {
			u := &turnUpstream{}
			srv := httptest.NewUnstartedServer(u)
			srv.EnableHTTP2 = h2
			srv.StartTLS()
			t.Cleanup(srv.Close)
			c := New(srv.URL, testToken)
			t.Cleanup(c.CloseIdleConnections)
			trustServer(c, srv)
			checkTurnThenUnary(t, c, u, proto)
		})
	}
}

// A redirect is not followed: the POST would become a GET without its
// JSON-RPC body. The status comes back as an *HTTPError.
func TestRedirectNotFollowed(t *testing.T) {
	var hits atomic.Int32
	c, _ := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ *captured) {
		hits.Add(1)
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	_, err := c.CancelTask(context.Background(), "T")
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("err %v, want HTTPError 307", err)
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d requests reached the upstream, want 1", n)
	}
}

// A POST the upstream received on a reused connection and never answered
// (it closed the connection instead) fails and is not sent again: the
// upstream may have acted on it. A raw listener, since net/http's server
// cannot be told to drop one connection after reading a request.
func TestUnansweredPostNotResent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int32
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	const answer = `{"jsonrpc":"2.0","id":"1","result":{"id":"T","contextId":"C","status":{"state":"TASK_STATE_CANCELED"}}}`
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer nc.Close()
				br := bufio.NewReader(nc)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					// The second request overall is dropped; any other
					// (the first, a resent second) is answered.
					if requests.Add(1) == 2 {
						return
					}
					_, _ = io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "+
						strconv.Itoa(len(answer))+"\r\n\r\n"+answer)
				}
			})
		}
	})
	c := New("http://"+ln.Addr().String(), "")
	t.Cleanup(c.CloseIdleConnections)
	var ct connTrace
	if _, err := c.CancelTask(ct.ctx(), "T"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CancelTask(ct.ctx(), "T"); err == nil {
		t.Fatal("an unanswered CancelTask succeeded")
	}
	if r := ct.got(); len(r) != 2 || !r[1] {
		t.Fatalf("connections reused %v, want the second call on the first call's connection", r)
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("the upstream read %d requests, want 2", n)
	}
}
