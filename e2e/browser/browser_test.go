// Package browser drives the embedded web console (/console) in a real
// headless chromium (Debian's, through playwright-core from npm) against
// the real binary with its embedded agent and a bearer token configured.
package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// requireDeploymentOverride turns on the assertion that the agent receives
// a deployment confirmation's parameter_overrides. The adapter currently
// sends only the chosen option's label for a selectedId answer (tracked
// separately); set this to true once that fix is merged.
const requireDeploymentOverride = true

const token = "console-e2e-token"

func chromiumPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is required under CI (apt-get install chromium): %v", err)
		}
		t.Skipf("no chromium at %s (apt-get install chromium); skipped outside CI", p)
	}
	return p
}

// ensurePlaywright installs the pinned playwright-core (no browsers).
func ensurePlaywright(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("node_modules/playwright-core/package.json"); err == nil {
		return
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
}

// startServer builds and starts the binary with the embedded agent (no
// iac-code on PATH), a bearer token and a private workspace root.
func startServer(t *testing.T, args ...string) (url, root string) {
	t.Helper()
	bin, cleanup, err := e2etest.Build("../../cmd/iac-code-agui")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	root = t.TempDir()
	port := e2etest.FreePort(t)
	cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--state-dir", t.TempDir()}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "IAC_CODE_AGUI_ALLOWED_CWDS=" + root, "IAC_CODE_AGUI_AUTH_TOKEN=" + token}
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server output:\n%s", out.String())
		}
	})
	url = fmt.Sprintf("http://127.0.0.1:%d/", port)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(url + "health"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return url, root
			}
		}
	}
	t.Fatalf("server did not become ready:\n%s", out.String())
	return "", ""
}

// TestConsole runs every scenario of console.mjs. With SCREENSHOTS set to
// a directory, the key states are saved there (scripts/screenshots.sh).
func TestConsole(t *testing.T) {
	chromium := chromiumPath(t)
	ensurePlaywright(t)
	url, root := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "console.mjs")
	cmd.Env = append(os.Environ(), "CONSOLE_URL="+url, "CONSOLE_TOKEN="+token, "CONSOLE_CWD="+root, "CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r struct {
			Name  string `json:"name"`
			OK    bool   `json:"ok"`
			MS    int    `json:"ms"`
			Error string `json:"error"`
		}
		line := sc.Text()
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &r) != nil || r.Name == "" {
			continue
		}
		seen++
		switch {
		case r.OK:
			t.Logf("%s passed in %d ms", r.Name, r.MS)
		case r.Name == "deployment" && !requireDeploymentOverride && strings.HasPrefix(r.Error, "OVERRIDE_NOT_RECEIVED:"):
			// Everything else of the scenario passed (the error is raised
			// last); only the adapter's known label-only answer remains.
			t.Logf("KNOWN ADAPTER BUG, not failing: %s (set requireDeploymentOverride once the deployment_confirmation answer carries parameter_overrides)", r.Error)
		default:
			t.Errorf("%s failed: %s", r.Name, r.Error)
		}
	}
	if seen < 15 {
		t.Fatalf("only %d results (err %v):\n%s", seen, err, out)
	}
	if err != nil && !t.Failed() && requireDeploymentOverride {
		t.Fatalf("harness: %v\n%s", err, out)
	}
}
