package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// safetyRun posts a normal turn to s with the given Host and headers and
// returns the status, headers and body.
func safetyRun(t *testing.T, s *Server, host string, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"threadId": "thread-safety-" + fmt.Sprint(time.Now().UnixNano()), "runId": "run-1", "protocolVersion": "1.0",
		"state": map[string]any{}, "tools": []any{}, "context": []any{},
		"messages":       []any{map[string]any{"id": "m-1", "role": "user", "content": "Create a VPC"}},
		"forwardedProps": map[string]any{"iacCode": map[string]any{"schemaVersion": 1, "rosInvocationId": "inv-1", "cwd": filepath.Join(s.Root, "ws")}},
	})
	req, err := http.NewRequest(http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

func wantRefusal(t *testing.T, status int, hdr http.Header, body []byte, code, msg string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if status != http.StatusForbidden || json.Unmarshal(body, &e) != nil || e.Error.Code != code || e.Error.Message != msg {
		t.Fatalf("got %d %s, want 403 %s %q", status, body, code, msg)
	}
	for k := range hdr {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Fatalf("CORS header %s on a refusal", k)
		}
	}
}

// TestHostAndOriginChecks: the real binary, started as the README's first
// command, refuses a DNS-rebinding request (attacker Host and Origin) and a
// cross-site page on a loopback Host, with and without a token, and the
// agent writes nothing; its own origin and an allowed name still run.
func TestHostAndOriginChecks(t *testing.T) {
	for _, token := range []string{"", "safety-token"} {
		t.Run(fmt.Sprintf("token=%v", token != ""), func(t *testing.T) {
			var env []string
			auth := map[string]string{}
			if token != "" {
				env = append(env, "IAC_CODE_AGUI_AUTH_TOKEN="+token)
				auth["Authorization"] = "Bearer " + token
			}
			s := startServerWith(t, "", []string{"--allowed-hosts", "agui.example.test"}, env...)
			u, _ := url.Parse(s.URL)
			port := u.Port()
			with := func(kv ...string) map[string]string {
				m := map[string]string{}
				for k, v := range auth {
					m[k] = v
				}
				for i := 0; i+1 < len(kv); i += 2 {
					m[kv[i]] = kv[i+1]
				}
				return m
			}
			st, hd, b := safetyRun(t, s, "attacker.example:"+port, with("Origin", "http://attacker.example:"+port))
			wantRefusal(t, st, hd, b, "HOST_NOT_ALLOWED", "The request's Host is not one this server answers to (see --allowed-hosts).")
			reqID := hd.Get("X-Request-Id")
			st, hd, b = safetyRun(t, s, "", with("Origin", "http://attacker.example", "Accept-Language", "de"))
			wantRefusal(t, st, hd, b, "ORIGIN_NOT_ALLOWED", "Der Origin der Anfrage ist nicht erlaubt (siehe --cors-origins).")
			// Nothing reached the agent: no workspace, no thread file.
			if _, err := os.Stat(filepath.Join(s.Root, "ws")); !os.IsNotExist(err) {
				t.Fatalf("the workspace exists after refusals: %v", err)
			}
			if files, _ := filepath.Glob(filepath.Join(s.StateDir, "threads", "*")); len(files) != 0 {
				t.Fatalf("thread files after refusals: %v", files)
			}
			// The server's own origin, and an allowed name, run a turn.
			for _, c := range []struct{ host, origin string }{
				{"127.0.0.1:" + port, "http://127.0.0.1:" + port},
				{"localhost:" + port, ""},
				{"agui.example.test:" + port, "https://agui.example.test:" + port},
			} {
				st, _, b := safetyRun(t, s, c.host, with("Origin", c.origin))
				if st != 200 || !bytes.Contains(b, []byte(`"RUN_FINISHED"`)) {
					t.Fatalf("%s: %d %s", c.host, st, b)
				}
			}
			// Logged with the request id, as a warning and in the access
			// line (read once the process is gone: its output buffer is
			// not safe to read while it writes).
			s.Stop(t)
			if logs := s.out.String(); !strings.Contains(logs, "requestId="+reqID+" method=POST route=run status=403") ||
				!strings.Contains(logs, "requestId="+reqID+" code=HOST_NOT_ALLOWED host=attacker.example:"+port) {
				t.Fatalf("no log lines for request %s", reqID)
			}
		})
	}
}

// TestCORSPreflight: with --cors-origins the binary answers a listed
// origin's preflight and marks its run's answer; another origin's
// preflight is refused without CORS headers. /health names the demo.
func TestCORSPreflight(t *testing.T) {
	s := startServerArgs(t, []string{"--cors-origins", "http://localhost:5173"})
	preflight := func(origin string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodOptions, s.URL, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,authorization")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	res, _ := preflight("http://localhost:5173")
	if res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" ||
		res.Header.Get("Access-Control-Allow-Methods") != "POST" || !strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("listed preflight: %d %v", res.StatusCode, res.Header)
	}
	res, b := preflight("http://localhost:5174")
	wantRefusal(t, res.StatusCode, res.Header, b, "ORIGIN_NOT_ALLOWED", "The request's Origin is not allowed (see --cors-origins).")
	st, hd, b := safetyRun(t, s, "", map[string]string{"Origin": "http://localhost:5173"})
	if st != 200 || hd.Get("Access-Control-Allow-Origin") != "http://localhost:5173" || hd.Get("Access-Control-Expose-Headers") != "X-Request-Id" ||
		!bytes.Contains(b, []byte(`"RUN_FINISHED"`)) {
		t.Fatalf("listed run: %d %v %s", st, hd, b)
	}
	hres, err := http.Get(s.URL + "health")
	if err != nil {
		t.Fatal(err)
	}
	defer hres.Body.Close()
	var doc map[string]string
	if err := json.NewDecoder(hres.Body).Decode(&doc); err != nil || doc["upstream"] != "demo" || doc["status"] != "ok" || len(doc) != 6 {
		t.Fatalf("/health %v %v", doc, err)
	}
}

// TestNoSilentDemo: the binary with a config file and no iac-code exits 1
// with the way out; with --demo and --a2a-url together, too.
func TestNoSilentDemo(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "agui.yaml")
	if err := os.WriteFile(cfg, []byte("port: "+fmt.Sprint(e2etest.FreePort(t))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", cfg, "--state-dir", t.TempDir()},
			"No A2A agent: --a2a-url is not set and iac-code is not on PATH. Point at a running agent with --a2a-url URL, or ask for the scripted demo agent with --demo.\n"},
		{[]string{"--demo", "--a2a-url", "http://127.0.0.1:41242"},
			"--demo and --a2a-url cannot be used together: choose the demo agent or the A2A server at --a2a-url.\n"},
	} {
		cmd := exec.Command(binary, c.args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || stderr.String() != c.want {
			t.Fatalf("%v: %v, stderr %q", c.args, err, stderr.String())
		}
	}
}
