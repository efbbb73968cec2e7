package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCopilotKit runs copilotkit/run.mjs: the real CopilotKit v2 runtime
// (@copilotkit/runtime 1.75.0, an HttpAgent per server) in front of two
// binaries, one as is and one with --compat copilotkit, and
// @copilotkit/core 1.75.0 as the client (docs/copilotkit.md).
func TestCopilotKit(t *testing.T) {
	ensureNodeModules(t, "copilotkit", "@copilotkit/runtime")
	ws := t.TempDir()
	// Both servers accept the one workspace the scenarios use.
	env := "IAC_CODE_AGUI_ALLOWED_CWDS=" + ws
	strict := startServerWith(t, "", nil, env)
	compat := startServerWith(t, "", []string{"--compat", "copilotkit"}, env)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "run.mjs")
	cmd.Dir = "copilotkit"
	cmd.Env = append(os.Environ(), "STRICT_URL="+strict.URL, "COMPAT_URL="+compat.URL, "AGUI_CWD="+ws,
		// No telemetry from the runtime (it has no network here anyway).
		"COPILOTKIT_TELEMETRY_DISABLED=true", "SCARF_ANALYTICS=false", "DO_NOT_TRACK=1")
	out, err := cmd.CombinedOutput()
	want := []string{"normalTurn", "permissionStrictRefusesReusedRunId", "permissionCompat", "question",
		"cancelledAnswerThenNewMessage", "reloadWithPendingInterrupt", "frontendTool"}
	passed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r struct {
			Name  string `json:"name"`
			OK    bool   `json:"ok"`
			MS    int    `json:"ms"`
			Error string `json:"error"`
		}
		line := sc.Text()
		if !strings.HasPrefix(line, `{"name"`) || json.Unmarshal([]byte(line), &r) != nil {
			continue
		}
		if r.OK {
			passed[r.Name] = true
			t.Logf("scenario %s passed in %d ms", r.Name, r.MS)
		} else {
			t.Errorf("scenario %s failed: %s", r.Name, r.Error)
		}
	}
	for _, name := range want {
		if !passed[name] {
			t.Errorf("scenario %s did not pass", name)
		}
	}
	if err != nil || t.Failed() {
		t.Fatalf("harness: %v\n%s", err, out)
	}
}

// ensureNodeModules installs a harness's pinned npm packages when they are
// missing, so that `go test ./...` works on a fresh machine with Node.js.
// Install scripts are not run: none of these packages needs one.
func ensureNodeModules(t *testing.T, dir, probe string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", probe, "package.json")); err == nil {
		return
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("npm is required for the %s test: %v", dir, err)
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}
