package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
)

// runExportState serves `export-state`, the inverse of import-state: it
// writes every thread document of the Redis store named by --state-store
// (under --redis-key-prefix) to <--state-dir>/threads/<file key>.json,
// through the file store, so each file is exactly what the file store and
// the original adapter write (protocol.md §8.5). A thread file that
// already exists is left alone (docs/decisions.md, "Export leaves existing
// files alone"). It exits 0 when every thread was exported or already
// present, else 1.
func runExportState(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, lang i18n.Lang) int {
	cfg, c, code := openRedisFor("export-state", "to export from", args, getenv, stdout, stderr, lang)
	if c == nil {
		return code
	}
	defer c.Close()
	files := filestore.New(cfg.StateDir)
	var exported, present, failed int
	err := redisstore.New(c, cfg.RedisKeyPrefix).Threads(ctx, func(key string, t *state.Thread, err error) error {
		if err == nil {
			// NoRevision: written only if no file is there yet.
			_, err = files.Save(ctx, t, state.NoRevision)
		}
		switch {
		case err == nil:
			exported++
		case errors.Is(err, state.ErrConflict):
			present++
		default:
			failed++
			fmt.Fprintf(stderr, "export-state: %s: %v\n", key, err)
		}
		return ctx.Err()
	})
	if err != nil {
		// The error names the address, never the password.
		fmt.Fprintln(stderr, "export-state:", err)
	}
	fmt.Fprintf(stdout, "exported %d, already present %d, failed %d\n", exported, present, failed)
	if failed > 0 || err != nil {
		return 1
	}
	return 0
}
