package reliability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// TestHostileInput sends the real binary what an attacker or a broken
// client would, on every route, and checks each gets its documented answer
// (never a hang, a crash or a stack trace) and that the server still works
// afterwards.
func TestHostileInput(t *testing.T) {
	s := startServer(t, serverOpts{env: []string{"IAC_CODE_AGUI_AUTH_TOKEN=Secret-Token"}})
	cwd := filepath.Join(s.Root, "ws")
	auth := map[string]string{"Authorization": "Bearer Secret-Token"}
	valid := func(thread string) []byte {
		b, _ := json.Marshal(input(thread, "run-1", "hello", cwd, nil))
		return b
	}

	t.Run("bearer tokens on every protected route", func(t *testing.T) {
		routes := []struct{ method, path string }{
			{"POST", "/"},
			{"POST", "/extensions/iac-code/v1/executions/x/cancel"},
			{"POST", "/extensions/iac-code/v1/executions/x/subscribe"},
			{"GET", "/metrics"},
		}
		for _, r := range routes {
			// (HTTP drops a header value's trailing blanks before the
			// server sees it, so "Bearer <token> " is the token itself.)
			for _, h := range []string{"", "Bearer", "Bearer ", "Bearer secret-token", "Bearer SECRET-TOKEN", "Basic Secret-Token", "Secret-Token", "Bearer  Secret-Token", "Bearer Secret-Token\tx"} {
				status, _ := raw(t, s.URL, r.method, r.path, map[string]string{"Authorization": h, "Content-Type": "application/json"}, []byte(`{}`))
				if status != 401 {
					t.Errorf("%s %s with %q: %d, want 401", r.method, r.path, h, status)
				}
			}
			// The scheme's letter case does not matter (protocol.md §2.3),
			// except on the subscribe route, which compares the whole
			// header and answers {"error":"Unauthorized"}.
			status, body := raw(t, s.URL, r.method, r.path, map[string]string{"Authorization": "bEaReR Secret-Token", "Content-Type": "application/json"}, []byte(`{}`))
			if strings.HasSuffix(r.path, "/subscribe") {
				if status != 401 || string(body) != "{\"error\":\"Unauthorized\"}\n" {
					t.Errorf("%s %s: a case-variant scheme: %d %q, want 401 {\"error\":\"Unauthorized\"}", r.method, r.path, status, body)
				}
			} else if status == 401 {
				t.Errorf("%s %s: a case-variant scheme was refused", r.method, r.path)
			}
		}
	})

	t.Run("oversized headers", func(t *testing.T) {
		status, _ := raw(t, s.URL, "POST", "/", map[string]string{"Authorization": "Bearer Secret-Token", "X-Big": strings.Repeat("a", 70<<10)}, valid("t-h"))
		if status != 431 {
			t.Fatalf("70 KiB header: %d, want 431", status)
		}
	})

	t.Run("oversized bodies", func(t *testing.T) {
		big := bytes.Repeat([]byte(" "), 12<<20+1)
		if status, body := raw(t, s.URL, "POST", "/", merge(auth, "Content-Type", "application/json"), big); status != 413 || errorCode(body) != "REQUEST_TOO_LARGE" {
			t.Errorf("with Content-Length: %d %.120s", status, body)
		}
		if status, body := chunked(t, s.URL, "/", merge(auth, "Content-Type", "application/json"), big); status != 413 || errorCode(body) != "REQUEST_TOO_LARGE" {
			t.Errorf("chunked, no Content-Length: %d %.120s", status, body)
		}
		cancelBig := bytes.Repeat([]byte(" "), 64<<10+1)
		if status, body := chunked(t, s.URL, "/extensions/iac-code/v1/executions/x/cancel", merge(auth, "Content-Type", "application/json"), cancelBig); status != 413 || errorCode(body) != "REQUEST_TOO_LARGE" {
			t.Errorf("cancel body: %d %.120s", status, body)
		}
	})

	t.Run("deeply nested JSON", func(t *testing.T) {
		for _, doc := range [][]byte{
			append(bytes.Repeat([]byte("["), 1_000_000), bytes.Repeat([]byte("]"), 1_000_000)...),
			[]byte(`{"threadId":"t","forwardedProps":` + strings.Repeat(`{"a":`, 200_000) + `1` + strings.Repeat(`}`, 200_000) + `}`),
		} {
			status, body := raw(t, s.URL, "POST", "/", merge(auth, "Content-Type", "application/json"), doc)
			if status != 400 {
				t.Errorf("nested %d bytes: %d %.120s", len(doc), status, body)
			}
		}
	})

	t.Run("invalid UTF-8 and control characters in ids", func(t *testing.T) {
		for _, c := range []struct {
			id     string
			status int
		}{{"t\xff", 400}, {"t\x01", 400}, {"t\u0085x", 400}, {"t\u2028x", 200}} {
			id := c.id
			for _, field := range []string{"threadId", "runId"} {
				b := input("t-ctl", "run-1", "hello", cwd, nil)
				b[field] = id
				doc, _ := json.Marshal(b)
				if bytes.Contains([]byte(id), []byte("\xff")) {
					doc = bytes.Replace(doc, []byte(`\ufffd`), []byte("\xff"), 1)
				}
				status, body := raw(t, s.URL, "POST", "/", merge(auth, "Content-Type", "application/json"), doc)
				if status != c.status {
					t.Errorf("%s %q: %d %.120s, want %d", field, id, status, body, c.status)
				}
			}
		}
	})

	t.Run("path tricks in thread ids stay in threads/", func(t *testing.T) {
		for _, id := range []string{"../../escape", "a/b/c", "..", ".", "CON", "nul.txt", strings.Repeat("😀", 200), "\\..\\x", "thread.json"} {
			doc, _ := json.Marshal(input(id, "run-1", "hello", cwd, nil))
			status, body := raw(t, s.URL, "POST", "/", merge(auth, "Content-Type", "application/json"), doc)
			if status != 200 {
				t.Errorf("thread id %q: %d %.120s", id, status, body)
				continue
			}
			key, err := state.FileKey(id)
			if err != nil {
				t.Errorf("%q has no file key: %v", id, err)
				continue
			}
			if _, err := os.Stat(filepath.Join(s.StateDir, "threads", key+".json")); err != nil {
				t.Errorf("%q: not stored under threads/: %v", id, err)
			}
		}
		var stray []string
		_ = filepath.Walk(filepath.Dir(s.StateDir), func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && !strings.HasPrefix(p, s.StateDir+string(filepath.Separator)) && strings.HasSuffix(p, ".json") {
				stray = append(stray, p)
			}
			return nil
		})
		if len(stray) != 0 {
			t.Fatalf("files written outside the state directory: %v", stray)
		}
	})

	t.Run("cwd tricks", func(t *testing.T) {
		for _, c := range []string{cwd + "/../../etc", "/etc", cwd + "/${HOME}", s.StateDir, "relative"} {
			doc, _ := json.Marshal(input("t-cwd", "run-1", "hello", c, nil))
			status, body := raw(t, s.URL, "POST", "/", merge(auth, "Content-Type", "application/json"), doc)
			if status != 400 || errorCode(body) != "INVALID_INPUT" {
				t.Errorf("cwd %q: %d %.120s", c, status, body)
			}
		}
	})

	// Still serving after all of it.
	status, body := raw(t, s.URL, "POST", "/", merge(auth, "Content-Type", "application/json"), valid("t-after"))
	if status != 200 || !strings.Contains(body, `"RUN_FINISHED"`) {
		t.Fatalf("after the hostile input: %d %.200s", status, body)
	}
	if out := s.out.String(); strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
		t.Fatalf("the server logged a panic:\n%s", tail(out, 3000))
	}
}

func merge(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// raw sends one request and returns its status and body (bounded wait).
func raw(t *testing.T, base, method, path string, headers map[string]string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(base, "/")+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		if v == "" && k == "Authorization" {
			continue
		}
		req.Header.Set(k, v)
	}
	c := &http.Client{Timeout: 30 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, string(b)
}

// chunked sends a body without Content-Length over a raw connection.
func chunked(t *testing.T, base, path string, headers map[string]string, body []byte) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var h strings.Builder
	h.WriteString("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n")
	for k, v := range headers {
		h.WriteString(k + ": " + v + "\r\n")
	}
	h.WriteString("\r\n")
	go func() {
		_, _ = io.WriteString(conn, h.String())
		for off := 0; off < len(body); off += 1 << 20 {
			end := min(off+1<<20, len(body))
			if _, err := io.WriteString(conn, strconv.FormatInt(int64(end-off), 16)+"\r\n"+string(body[off:end])+"\r\n"); err != nil {
				return
			}
		}
		_, _ = io.WriteString(conn, "0\r\n\r\n")
	}()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("chunked %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, string(b)
}
