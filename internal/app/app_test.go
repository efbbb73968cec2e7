package app

// Tests of the command line and the managed A2A child (protocol.md §1.7,
// §1.8). The stand-in `iac-code` is a shell script that checks and records
// how it was started, then execs this test binary as `demo-agent` (TestMain
// turns it into the real command), so the managed path runs real processes
// over real loopback HTTP without a separate build.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// childEnv marks a re-executed test binary that must run the command.
const childEnv = "IAC_CODE_AGUI_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// standIn writes <dir>/bin/iac-code with body after a shebang and puts
// only that directory (plus the system's) on PATH.
func standIn(t *testing.T, body string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "iac-code"), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	return dir
}

// demoStandIn checks the §1.8 command line and token, records argv, the
// token's length (never its value), the allowed-cwds variable and its pid,
// then becomes the demo agent, which reads IACCODE_A2A_HTTP_TOKEN.
func demoStandIn(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := `if [ "$#" -ne 7 ] || [ "$1" != a2a ] || [ "$2" != --host ] || [ "$3" != 127.0.0.1 ] || [ "$4" != --port ] ||
   [ "$6" != --thinking-exposure ] || [ "$7" != all ]; then echo "stand-in: unexpected arguments: $*" >&2; exit 97; fi
case "$5" in ''|*[!0-9]*) echo "stand-in: bad port" >&2; exit 97;; esac
[ -n "$IACCODE_A2A_HTTP_TOKEN" ] || { echo "stand-in: no token" >&2; exit 98; }
printf '%s\n' "$*" > '` + dir + `/argv'
printf '%s\n' "${#IACCODE_A2A_HTTP_TOKEN}" > '` + dir + `/token-length'
printf '%s\n' "$IACCODE_A2A_ALLOWED_CWDS" > '` + dir + `/allowed-cwds'
printf '%s\n' "$$" > '` + dir + `/pid'
` + childEnv + `=1 exec '` + exe + `' demo-agent --host 127.0.0.1 --port "$5"
`
	standIn(t, script)
	return dir
}

type mainRun struct {
	port           int
	stdout, stderr *e2etest.Buffer
	cancel         context.CancelFunc
	done           chan int
}

// startMain runs mainContext in a goroutine on a free port.
func startMain(t *testing.T, env map[string]string, extra ...string) *mainRun {
	t.Helper()
	return startMainWith(t, defaultChildTimings, env, extra...)
}

// startMainWith is startMain with the managed child's timings.
func startMainWith(t *testing.T, tm childTimings, env map[string]string, extra ...string) *mainRun {
	t.Helper()
	r := &mainRun{port: freeTCPPort(t), stdout: &e2etest.Buffer{}, stderr: &e2etest.Buffer{}, done: make(chan int, 1)}
	args := append([]string{"--port", strconv.Itoa(r.port), "--state-dir", t.TempDir()}, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- mainWith(ctx, args, func(k string) string { return env[k] }, r.stdout, r.stderr, tm) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(15 * time.Second):
			t.Error("Main did not return after cancel")
		}
	})
	return r
}

// wait returns Main's exit status.
func (r *mainRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-r.done:
		r.done <- code // keep it for Cleanup
		return code
	case <-time.After(15 * time.Second):
		t.Fatalf("Main did not return; stderr:\n%s", r.stderr)
		return -1
	}
}

// waitHealthy polls the adapter's /health until it answers 200.
func (r *mainRun) waitHealthy(t *testing.T) {
	t.Helper()
	url := "http://127.0.0.1:" + strconv.Itoa(r.port) + "/health"
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case code := <-r.done:
			r.done <- code // keep it for Cleanup
			t.Fatalf("Main returned %d before serving; stderr:\n%s", code, r.stderr)
		default:
		}
		if res, err := http.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("adapter not healthy; stderr:\n%s", r.stderr)
}

// runNormalTurn posts a RunAgentInput (as @ag-ui/client 1.0.0 sends it)
// and returns the SSE events.
func (r *mainRun) runNormalTurn(t *testing.T, root string) []map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"threadId": "thread-app", "runId": "run-1", "protocolVersion": "1.0",
		"state": map[string]any{}, "tools": []any{}, "context": []any{},
		"messages": []any{map[string]any{"id": "m-1", "role": "user", "content": "Create a VPC"}},
		"forwardedProps": map[string]any{"iacCode": map[string]any{"schemaVersion": 1, "rosInvocationId": "invocation-1",
			"cwd": filepath.Join(root, "ws")}},
	})
	res, err := http.Post("http://127.0.0.1:"+strconv.Itoa(r.port)+"/", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST / = %d", res.StatusCode)
	}
	var evs []map[string]any
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev map[string]any
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

// health returns the adapter's /health document.
func (r *mainRun) health(t *testing.T) map[string]any {
	t.Helper()
	res, err := http.Get("http://127.0.0.1:" + strconv.Itoa(r.port) + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestManagedChild(t *testing.T) {
	rec := demoStandIn(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := startMain(t, map[string]string{"IAC_CODE_AGUI_ALLOWED_CWDS": root})
	r.waitHealthy(t)
	evs := r.runNormalTurn(t, root)
	if len(evs) < 2 || evs[0]["type"] != "RUN_STARTED" {
		t.Fatalf("events = %v", evs)
	}
	last := evs[len(evs)-1]
	if out, _ := last["outcome"].(map[string]any); last["type"] != "RUN_FINISHED" || out["type"] != "success" {
		t.Fatalf("last event = %v", last)
	}
	logs := r.stderr.String()
	if !strings.Contains(logs, `msg="Managed iac-code A2A process ready"`) || !strings.Contains(logs, "upstream=managed") {
		t.Fatalf("log has no managed-ready line:\n%s", logs)
	}
	if got := r.health(t)["upstream"]; got != "managed" {
		t.Fatalf("/health upstream = %v", got)
	}
	argv := strings.Fields(readFile(t, rec+"/argv"))
	if len(argv) != 7 {
		t.Fatalf("argv = %v", argv)
	}
	port, _ := strconv.Atoi(argv[4])
	if port < 1 || port > 65535 || !strings.Contains(logs, "url=http://127.0.0.1:"+argv[4]+"/") {
		t.Fatalf("argv = %v", argv)
	}
	// 32 random bytes in URL-safe base64 without padding.
	if n := readFile(t, rec+"/token-length"); n != "43" {
		t.Fatalf("token length = %s, want 43", n)
	}
	if v := readFile(t, rec+"/allowed-cwds"); v != root {
		t.Fatalf("IACCODE_A2A_ALLOWED_CWDS = %q, want %q", v, root)
	}
	pid, _ := strconv.Atoi(readFile(t, rec+"/pid"))
	if pid <= 0 || processGone(pid) {
		t.Fatalf("child pid %d is not running", pid)
	}
	r.cancel()
	if code := r.wait(t); code != 0 {
		t.Fatalf("Main = %d after cancel; stderr:\n%s", code, r.stderr)
	}
	// stopChild has reaped the child before Main returned.
	if !processGone(pid) {
		t.Fatalf("managed child %d outlived Main", pid)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+argv[4], time.Second); err == nil {
		c.Close()
		t.Fatal("the child's port still accepts connections")
	}
}

func TestManagedChildExitsDuringStartup(t *testing.T) {
	standIn(t, "exit 3\n")
	r := startMain(t, nil)
	if code := r.wait(t); code != 1 {
		t.Fatalf("Main = %d, want 1", code)
	}
	if got := r.stderr.String(); !strings.HasSuffix(got, "The local A2A process exited during startup (exit code 3).\n") {
		t.Fatalf("stderr = %q", got)
	}
}

func TestManagedChildNeverReady(t *testing.T) {
	rec := t.TempDir()
	standIn(t, "printf '%s\\n' \"$$\" > '"+rec+"/pid'\nexec sleep 60\n")
	tm := defaultChildTimings
	tm.ready = 600 * time.Millisecond
	r := startMainWith(t, tm, nil)
	if code := r.wait(t); code != 1 {
		t.Fatalf("Main = %d, want 1", code)
	}
	if got := r.stderr.String(); !strings.HasSuffix(got, "The local A2A process did not become ready in time.\n") {
		t.Fatalf("stderr = %q", got)
	}
	pid, _ := strconv.Atoi(readFile(t, rec+"/pid"))
	if !processGone(pid) {
		t.Fatalf("the unready child %d was not stopped", pid)
	}
}

func TestEmbeddedAgentWithoutIacCode(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := startMain(t, nil)
	r.waitHealthy(t)
	if logs := r.stderr.String(); !strings.Contains(logs, "level=WARN msg=\"No --a2a-url and no iac-code on PATH: using the embedded demo A2A agent") ||
		!strings.Contains(logs, "upstream=demo") {
		t.Fatalf("log:\n%s", logs)
	}
	if got := r.health(t)["upstream"]; got != "demo" {
		t.Fatalf("/health upstream = %v", got)
	}
	r.cancel()
	if code := r.wait(t); code != 0 {
		t.Fatalf("Main = %d after cancel", code)
	}
}

// TestNoDemoWhenConfigured: without iac-code, any configuration beyond the
// README's first command (a config file, a Redis store, an advertised
// URL) stops the process with the way out instead of starting the demo.
func TestNoDemoWhenConfigured(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	cfg := filepath.Join(t.TempDir(), "agui.yaml")
	if err := os.WriteFile(cfg, []byte("log-format: json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const want = "No A2A agent: --a2a-url is not set and iac-code is not on PATH. Point at a running agent with --a2a-url URL, or ask for the scripted demo agent with --demo.\n"
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"config file", nil, []string{"--config", cfg}},
		{"redis store", map[string]string{"IAC_CODE_AGUI_STATE_STORE": "redis://127.0.0.1:1/0"}, nil},
		{"advertise url", nil, []string{"--advertise-url", "http://127.0.0.1:9/"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := startMain(t, c.env, c.args...)
			if code := r.wait(t); code != 1 || r.stderr.String() != want {
				t.Fatalf("Main = %d, stderr %q", code, r.stderr)
			}
		})
	}
	t.Run("demo with a2a-url", func(t *testing.T) {
		r := startMain(t, map[string]string{"IAC_CODE_AGUI_DEMO": "1"}, "--a2a-url", "http://127.0.0.1:9/")
		if code := r.wait(t); code != 1 ||
			r.stderr.String() != "--demo and --a2a-url cannot be used together: choose the demo agent or the A2A server at --a2a-url.\n" {
			t.Fatalf("Main = %d, stderr %q", code, r.stderr)
		}
	})
	t.Run("demo asked for", func(t *testing.T) {
		r := startMain(t, nil, "--config", cfg, "--demo")
		r.waitHealthy(t)
		if got := r.health(t)["upstream"]; got != "demo" || !strings.Contains(r.stderr.String(), `"level":"WARN","msg":"--demo: using the embedded demo A2A agent`) {
			t.Fatalf("/health upstream = %v; log:\n%s", got, r.stderr)
		}
	})
}

// TestDemoWinsOverIacCode: --demo asks for the demo agent even when
// iac-code is on PATH (the stand-in records a start; it must not run).
func TestDemoWinsOverIacCode(t *testing.T) {
	rec := t.TempDir()
	standIn(t, "touch '"+rec+"/started'\nexit 3\n")
	r := startMain(t, nil, "--demo")
	r.waitHealthy(t)
	if got := r.health(t)["upstream"]; got != "demo" {
		t.Fatalf("/health upstream = %v", got)
	}
	if _, err := os.Stat(filepath.Join(rec, "started")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("iac-code was started: %v", err)
	}
}

func TestCommandLineErrors(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := startMain(t, nil, "--a2a-url", "http://10.0.0.1/")
	if code := r.wait(t); code != 1 || r.stderr.String() != "The AG-UI adapter may connect only to a loopback A2A HTTP(S) URL.\n" {
		t.Fatalf("non-loopback URL: %d, stderr %q", code, r.stderr)
	}
	var out, errb e2etest.Buffer
	if code := Main([]string{"--help"}, func(string) string { return "" }, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "--a2a-url") || errb.String() != "" {
		t.Fatalf("--help: %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	var out2, errb2 e2etest.Buffer
	if code := Main([]string{"--no-such-flag"}, func(string) string { return "" }, &out2, &errb2); code != 2 ||
		!strings.Contains(errb2.String(), "no-such-flag") || out2.String() != "" {
		t.Fatalf("unknown flag: %d, stdout %q, stderr %q", code, out2.String(), errb2.String())
	}
}

// TestStopClosesSilentConnections: a client's connection that never sent
// a request (a transport's spare) does not hold the stop: net/http waits
// 5 s for such a connection, the stop closes it at once.
func TestStopClosesSilentConnections(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := startMain(t, nil)
	r.waitHealthy(t)
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(r.port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	r.cancel()
	if code := r.wait(t); code != 0 {
		t.Fatalf("Main = %d after cancel", code)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the stop took %v with a silent connection open", took)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the silent connection is still open")
	}
}
