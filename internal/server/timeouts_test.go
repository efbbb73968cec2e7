package server_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/server"
)

// TestTimeouts: a client that never finishes its headers is cut after the
// read-header timeout, while a response that streams for longer than every
// timeout is not (issue 2, server hygiene).
func TestTimeouts(t *testing.T) {
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
	srv := server.NewHTTPServer(ln.Addr().String(), long, server.Timeouts{ReadHeader: 200 * time.Millisecond, Idle: 200 * time.Millisecond})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: localhost\r\n") // headers never end
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
