package browser

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// TestCORSFromAnotherOrigin: a page served on another loopback port uses
// the official @ag-ui/client in chromium to run a turn that asks for a
// permission and to answer it, when its origin is in --cors-origins; when
// it is not, the browser blocks the request and nothing reaches the agent.
func TestCORSFromAnotherOrigin(t *testing.T) {
	chromium := chromiumPath(t)
	ensurePlaywright(t)
	listed := e2etest.FreePort(t)
	url, root := startServer(t, "--cors-origins", "http://127.0.0.1:"+strconv.Itoa(listed))
	for _, c := range []struct {
		name string
		port int
	}{{"listed", listed}, {"unlisted", e2etest.FreePort(t)}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", "cors.mjs")
			cmd.Env = append(os.Environ(), "AGUI_URL="+url, "AGUI_TOKEN="+token, "AGUI_CWD="+filepath.Join(root, c.name),
				"PAGE_PORT="+strconv.Itoa(c.port), "CHROMIUM="+chromium)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("cors.mjs: %v\n%s", err, out)
			}
			var r struct {
				First         string `json:"first"`
				Pending       []struct{ ID, Reason string }
				Resumed       string   `json:"resumed"`
				ResumedEvents int      `json:"resumedEvents"`
				Error         string   `json:"error"`
				Diagnostics   []string `json:"diagnostics"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &r); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if len(r.Diagnostics) != 0 {
				t.Fatalf("@ag-ui/client logged in the page: %v", r.Diagnostics)
			}
			if c.name == "listed" && (r.Error != "" || r.First != "interrupt" || len(r.Pending) != 1 || r.Pending[0].Reason != "tool_call" || r.Resumed != "success" || r.ResumedEvents < 3) {
				t.Fatalf("listed origin: %s", out)
			}
			if c.name == "unlisted" && (r.Error == "" || r.First != "" || len(r.Pending) != 0) {
				t.Fatalf("unlisted origin was not blocked: %s", out)
			}
			if c.name == "unlisted" {
				if _, err := os.Stat(filepath.Join(root, c.name)); !os.IsNotExist(err) {
					t.Fatalf("the blocked page's run reached the agent: %v", err)
				}
			}
		})
	}
}
