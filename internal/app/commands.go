package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/buildinfo"
	"github.com/iac-code-agui/iac-code-agui/internal/config"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// printVersion serves `version` and `--version`.
func printVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "config: unexpected argument %q\n", args[0])
		return 2
	}
	fmt.Fprintln(stdout, buildinfo.Get().String())
	return 0
}

// healthcheckTimeout bounds one probe; a container runtime kills a
// HEALTHCHECK that hangs anyway, but an operator's script should not.
const healthcheckTimeout = 5 * time.Second

// runHealthcheck serves `healthcheck`: a probe for images without curl.
// It exits 0 when /health answers 200 with status "ok", else 1 with the
// reason on stderr.
func runHealthcheck(parent context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, lang i18n.Lang) int {
	url, err := config.LoadHealthcheck(args, getenv)
	if code, done := loadFailed(err, config.Usage(), stdout, stderr, lang); done {
		return code
	}
	ctx, cancel := context.WithTimeout(parent, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintln(stderr, "healthcheck:", err)
		return 1
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "healthcheck:", err)
		return 1
	}
	defer res.Body.Close()
	var body struct {
		Status        string `json:"status"`
		ServerVersion string `json:"serverVersion"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&body); err != nil || res.StatusCode != http.StatusOK || body.Status != "ok" {
		fmt.Fprintf(stderr, "healthcheck: %s answered %d, status %q\n", url, res.StatusCode, body.Status)
		return 1
	}
	fmt.Fprintf(stdout, "ok %s\n", body.ServerVersion)
	return 0
}
