package server_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawExchange opens a TCP connection to the server behind url, writes
// head (and then body, after pause), and reads the response and what
// follows it until the server closes the connection or 5 s pass.
func rawExchange(t *testing.T, url, head, body string, pause time.Duration) (res *http.Response, closed bool, elapsed time.Duration) {
	t.Helper()
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	if body != "" {
		go func() {
			time.Sleep(pause)
			_, _ = io.WriteString(conn, body)
		}()
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	res, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response after %v: %v", time.Since(start), err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body = io.NopCloser(strings.NewReader(string(b)))
	elapsed = time.Since(start)
	// The server must then close: a further read ends with EOF, not the
	// 5 s deadline.
	_, err = br.ReadByte()
	return res, err == io.EOF, elapsed
}

func envelopeCode(t *testing.T, res *http.Response) string {
	t.Helper()
	var b struct {
		Error struct{ Code, Message string }
	}
	if err := json.NewDecoder(res.Body).Decode(&b); err != nil {
		t.Fatalf("status %d: no error envelope: %v", res.StatusCode, err)
	}
	return b.Error.Code
}

// TestUnsentBodyIsBounded is the regression test for reliability finding
// 1: a client that announces a body and sends nothing used to keep its
// connection forever and never see its 401, on every route. Now a refusal
// is answered at once and closes the connection, and an authorized
// request that never delivers its body gets 408 after the body deadline.
func TestUnsentBodyIsBounded(t *testing.T) {
	const deadline = 2 * time.Second
	e := newEnv(t, envOptions{authToken: "s3cret", bodyTimeout: deadline})
	post := func(path, auth string) string {
		h := "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 20000\r\n"
		if auth != "" {
			h += "Authorization: Bearer " + auth + "\r\n"
		}
		return h + "\r\n"
	}
	cases := []struct {
		name, head string
		status     int
		code       string
		timesOut   bool
	}{
		{"run without token", post("/", ""), 401, "UNAUTHORIZED", false},
		{"cancel with a wrong token", post("/extensions/iac-code/v1/executions/x/cancel", "nope"), 401, "UNAUTHORIZED", false},
		{"health with a body", "GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 20000\r\n\r\n", 200, "", false},
		{"unknown route", post("/nowhere", ""), 404, "", false},
		{"run with token, body never sent", post("/", "s3cret"), 408, "REQUEST_TIMEOUT", true},
		{"cancel with token, body never sent", post("/extensions/iac-code/v1/executions/x/cancel", "s3cret"), 408, "REQUEST_TIMEOUT", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, closed, elapsed := rawExchange(t, e.URL, c.head, "", 0)
			if res.StatusCode != c.status {
				t.Fatalf("status %d, want %d", res.StatusCode, c.status)
			}
			if c.code != "" {
				if code := envelopeCode(t, res); code != c.code {
					t.Fatalf("code %q, want %q", code, c.code)
				}
			}
			if !closed {
				t.Fatal("connection kept open after answering a request whose body was never read")
			}
			// A refusal must not wait for the body deadline (net/http
			// would otherwise drain the unread body first); a timeout
			// comes at the deadline, not later.
			if !c.timesOut && elapsed >= deadline/2 || c.timesOut && (elapsed < deadline || elapsed > 2*deadline) {
				t.Fatalf("answered after %v (deadline %v, times out: %v)", elapsed, deadline, c.timesOut)
			}
		})
	}
}

// TestSlowBodyGetsTimeout: a body that pauses past the deadline and then
// completes used to get "200 OK" with an empty body for a run that was
// never admitted; it gets 408 REQUEST_TIMEOUT, translated, and no run.
func TestSlowBodyGetsTimeout(t *testing.T) {
	e := newEnv(t, envOptions{bodyTimeout: 300 * time.Millisecond})
	raw, err := json.Marshal(e.body("thread-slow", "run-1", "Create a VPC template", nil))
	if err != nil {
		t.Fatal(err)
	}
	head := "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept-Language: es\r\nContent-Length: " +
		strconv.Itoa(len(raw)) + "\r\n\r\n"
	res, closed, _ := rawExchange(t, e.URL, head+string(raw[:10]), string(raw[10:]), 800*time.Millisecond)
	var b struct {
		Error struct{ Code, Message string }
	}
	if err := json.NewDecoder(res.Body).Decode(&b); err != nil || res.StatusCode != 408 || b.Error.Code != "REQUEST_TIMEOUT" ||
		b.Error.Message != "El cuerpo de la solicitud no se recibió a tiempo." || !closed {
		t.Fatalf("got %d %+v (closed %v, %v)", res.StatusCode, b.Error, closed, err)
	}
	// Nothing was admitted: the same run id starts normally.
	r := post(t, e.URL, e.body("thread-slow", "run-1", "Create a VPC template", nil), nil)
	if r.Status != 200 || len(r.Events) == 0 || r.Events[len(r.Events)-1]["type"] != "RUN_FINISHED" {
		t.Fatalf("run after the timeout: %d %s", r.Status, r.Body)
	}
}

// TestTruncatedBody: a body that ends before its Content-Length is not
// valid JSON (400), never an empty 200.
func TestTruncatedBody(t *testing.T) {
	e := newEnv(t, envOptions{})
	host := strings.TrimSuffix(strings.TrimPrefix(e.URL, "http://"), "/")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"threadId\":")
	_ = conn.(*net.TCPConn).CloseWrite()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if code := envelopeCode(t, res); res.StatusCode != 400 || code != "INVALID_JSON" {
		t.Fatalf("got %d %s", res.StatusCode, code)
	}
}
