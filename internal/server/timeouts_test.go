package server

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTimeouts: a client that never finishes its headers is cut after the
// read-header timeout, while a response that streams for longer than every
// timeout is not (issue 2, server hygiene). Internal test: it shortens the
// package's timeouts.
func TestTimeouts(t *testing.T) {
	readHeaderTimeout, idleTimeout = 200*time.Millisecond, 200*time.Millisecond
	t.Cleanup(func() { readHeaderTimeout, idleTimeout = 10*time.Second, 120*time.Second })
	long := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		for i := 0; i < 8; i++ { // 800 ms, four times the timeouts
			_, _ = io.WriteString(w, ": tick\n\n")
			_ = rc.Flush()
			time.Sleep(100 * time.Millisecond)
		}
		_, _ = io.WriteString(w, "data: done\n\n")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewHTTPServer(ln.Addr().String(), long)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n") // headers never end
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(conn)
	if err != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("slow-header client not cut: %v after %v", err, time.Since(start))
	}

	res, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || !strings.HasSuffix(string(body), "data: done\n\n") {
		t.Fatalf("long stream cut: %v %q", err, body)
	}
}
