package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// TestCopilotKitReact runs copilotkit-react/run.mjs: a React page built on
// @copilotkit/react-core/v2 (CopilotKitProvider, CopilotChat, useInterrupt),
// bundled by esbuild, in Debian's headless chromium through playwright-core,
// with the real CopilotKit v2 runtime in front of the real binary under
// --compat copilotkit (docs/copilotkit.md). Every RunAgentInput the runtime
// sent and every event it received is checked against the published
// contract (schemas/), and
// types-check.ts against its TypeScript declarations.
func TestCopilotKitReact(t *testing.T) {
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is required under CI: %v", err)
		}
		t.Skipf("no chromium at %s; skipped outside CI", chromium)
	}
	ensureNodeModules(t, "copilotkit-react", "typescript")
	// The published TypeScript declarations compile and reject what the
	// server refuses (types-check.ts).
	tsc := exec.Command("node", "node_modules/typescript/bin/tsc", "-p", "tsconfig.json")
	tsc.Dir = "copilotkit-react"
	if out, err := tsc.CombinedOutput(); err != nil {
		t.Fatalf("tsc on @iac-code-agui/protocol: %v\n%s", err, out)
	}
	ws := t.TempDir()
	s := startServerWith(t, "", []string{"--compat", "copilotkit"}, "IAC_CODE_AGUI_ALLOWED_CWDS="+ws)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "run.mjs")
	cmd.Dir = "copilotkit-react"
	cmd.Env = append(os.Environ(), "AGUI_URL="+s.URL, "AGUI_CWD="+ws, "CHROMIUM="+chromium,
		"COPILOTKIT_TELEMETRY_DISABLED=true", "SCARF_ANALYTICS=false", "DO_NOT_TRACK=1")
	out, err := cmd.CombinedOutput()
	want := []string{"streamedText", "permissionAllow", "permissionDeny", "question", "deploymentWithOverride",
		"pipeline", "stop", "reloadResumesPendingInterrupt", "resumeRequiredAfterRuntimeLostHistory", "frontendTool"}
	passed := map[string]bool{}
	var requests, resumes, overrides, withTools int
	var events []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, `{"request"`):
			var r struct {
				Request map[string]any `json:"request"`
			}
			if json.Unmarshal([]byte(line), &r) != nil {
				t.Errorf("undecodable request line %s", line)
				continue
			}
			requests++
			if _, ok := r.Request["resume"]; ok {
				resumes++
			}
			if tools, _ := r.Request["tools"].([]any); len(tools) > 0 {
				withTools++
			}
			if strings.Contains(line, `"parameter_overrides":{"InstanceCount":2}`) {
				overrides++
			}
			// Kinds are unknown here; the answers are checked by shape.
			e2etest.CheckRequest(t, r.Request, nil)
		case strings.HasPrefix(line, `{"event"`):
			var r struct {
				Event map[string]any `json:"event"`
			}
			if json.Unmarshal([]byte(line), &r) != nil {
				t.Errorf("undecodable event line %s", line)
				continue
			}
			events = append(events, r.Event)
		case strings.HasPrefix(line, `{"name"`):
			var r struct {
				Name  string `json:"name"`
				OK    bool   `json:"ok"`
				MS    int    `json:"ms"`
				Error string `json:"error"`
			}
			if json.Unmarshal([]byte(line), &r) != nil {
				continue
			}
			if r.OK {
				passed[r.Name] = true
				t.Logf("case %s passed in %d ms", r.Name, r.MS)
			} else {
				t.Errorf("case %s failed: %s", r.Name, r.Error)
			}
		}
	}
	// The events as the runtime's HttpAgent decoded them, checked against
	// the published contract.
	e2etest.CheckEvents(t, events)
	customs := 0
	for _, ev := range events {
		if ev["type"] == "CUSTOM" {
			customs++
		}
	}
	if customs == 0 {
		t.Errorf("the runtime relayed no CUSTOM event (%d events)", len(events))
	}
	for _, name := range want {
		if !passed[name] {
			t.Errorf("case %s did not pass", name)
		}
	}
	// Resumes: allow, deny, question, deployment, two reloads; one deployment
	// override; the front-end tool's page sent its tool (and still ran).
	if requests == 0 || resumes < 6 || overrides != 1 || withTools == 0 {
		t.Errorf("requests %d, resumes %d, deployment overrides %d, with tools %d: want some, at least 6, exactly 1, some", requests, resumes, overrides, withTools)
	}
	if err != nil || t.Failed() {
		t.Fatalf("harness: %v\n%s", err, out)
	}
}
