package app

import (
	"encoding/json"
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// versionLine is buildinfo.Info.String(): version, commit, Go version.
var versionLine = regexp.MustCompile(`^iac-code-agui (\S+) \(commit (\S+), (go\S+) \S+/\S+\)\n$`)

func TestVersionCommands(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"--port", "1", "--version"}} {
		var out, errb e2etest.Buffer
		code := Main(args, func(string) string { return "" }, &out, &errb)
		m := versionLine.FindStringSubmatch(out.String())
		if code != 0 || m == nil || errb.String() != "" {
			t.Fatalf("%q: %d, stdout %q, stderr %q", args, code, out.String(), errb.String())
		}
		// A test binary has no module version: the development fallback.
		if m[1] != "0.1.0-dev" || m[3] != runtime.Version() {
			t.Fatalf("%q: version %q, go %q", args, m[1], m[3])
		}
	}
	var out, errb e2etest.Buffer
	if code := Main([]string{"version", "x"}, func(string) string { return "" }, &out, &errb); code != 2 || out.String() != "" {
		t.Fatalf("version x: %d %q", code, out.String())
	}
	if code := Main([]string{"help"}, func(string) string { return "" }, &out, &errb); code != 0 || !strings.Contains(out.String(), "--log-format") {
		t.Fatalf("help: %d", code)
	}
}

func TestHealthcheckAndHealthVersion(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := startMain(t, nil, "--log-format", "json")
	r.waitHealthy(t)
	port := strconv.Itoa(r.port)
	res, err := http.Get("http://127.0.0.1:" + port + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]string
	_ = json.NewDecoder(res.Body).Decode(&h)
	res.Body.Close()
	if h["serverVersion"] != "0.1.0-dev" {
		t.Fatalf("/health serverVersion = %q", h["serverVersion"])
	}
	var out, errb e2etest.Buffer
	env := map[string]string{"IAC_CODE_AGUI_PORT": port}
	if code := Main([]string{"healthcheck"}, func(k string) string { return env[k] }, &out, &errb); code != 0 || out.String() != "ok 0.1.0-dev\n" {
		t.Fatalf("healthcheck: %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	var out2, errb2 e2etest.Buffer
	if code := Main([]string{"healthcheck", "--url", "http://127.0.0.1:" + port + "/metrics"}, func(string) string { return "" }, &out2, &errb2); code != 1 ||
		!strings.Contains(errb2.String(), "answered 200") {
		t.Fatalf("healthcheck of a non-health URL: %d, stderr %q", code, errb2.String())
	}
	var out3, errb3 e2etest.Buffer
	if code := Main([]string{"healthcheck", "--url", "http://127.0.0.1:1/health"}, func(string) string { return "" }, &out3, &errb3); code != 1 ||
		!strings.HasPrefix(errb3.String(), "healthcheck: ") {
		t.Fatalf("healthcheck of a closed port: %d, stderr %q", code, errb3.String())
	}
	// --log-format json: every log line is one JSON object with the
	// session id and the listening line carries the version.
	listening := false
	for _, line := range strings.Split(strings.TrimSpace(r.stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if rec["session"] != "agui-adapter" {
			t.Fatalf("log line without session: %q", line)
		}
		if rec["msg"] == "AG-UI adapter listening" {
			listening = rec["version"] == "0.1.0-dev" && rec["commit"] != ""
		}
	}
	if !listening {
		t.Fatalf("no listening line with the version:\n%s", r.stderr)
	}
}
