package browser

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

	"github.com/iac-code-agui/iac-code-agui/e2e/a2aagents/goagent"
)

// TestConsoleGeneric drives the console in chromium against the binary
// with --a2a-profile generic in front of the a2a-go test agent: streamed
// text, the agent's question answered from its free-text card, and the
// agent's failure.
func TestConsoleGeneric(t *testing.T) {
	chromium := chromiumPath(t)
	ensurePlaywright(t)
	agent, err := goagent.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Close() })
	url, _ := startServer(t, "--a2a-profile", "generic", "--a2a-url", agent.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "generic.mjs")
	cmd.Env = append(os.Environ(), "CONSOLE_URL="+url, "CONSOLE_TOKEN="+token, "CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	passed := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			Name  string `json:"name"`
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if !strings.HasPrefix(sc.Text(), "{") || json.Unmarshal(sc.Bytes(), &r) != nil || r.Name == "" {
			continue
		}
		if r.OK {
			passed++
		} else {
			t.Errorf("%s failed: %s", r.Name, r.Error)
		}
	}
	if err != nil || passed != 4 {
		t.Fatalf("%d of 4 passed (err %v):\n%s", passed, err, out)
	}
	if got := agent.Answers(); len(got) != 1 || got[0] != "Ada" {
		t.Fatalf("the agent received %q, want [Ada]", got)
	}
}
