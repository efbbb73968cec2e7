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

// TestCORSFromAnotherOrigin: a page served on another loopback port runs
// a turn against the server in chromium when its origin is in
// --cors-origins (and reads X-Request-Id), and is blocked when it is not.
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
				Status    int    `json:"status"`
				Finished  bool   `json:"finished"`
				RequestID string `json:"requestId"`
				Error     string `json:"error"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &r); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if c.name == "listed" && (r.Status != 200 || !r.Finished || r.RequestID == "") {
				t.Fatalf("listed origin: %+v", r)
			}
			if c.name == "unlisted" && (r.Error == "" || r.Status != 0) {
				t.Fatalf("unlisted origin was not blocked: %+v", r)
			}
			if c.name == "unlisted" {
				if _, err := os.Stat(filepath.Join(root, c.name)); !os.IsNotExist(err) {
					t.Fatalf("the blocked page's run reached the agent: %v", err)
				}
			}
		})
	}
}
