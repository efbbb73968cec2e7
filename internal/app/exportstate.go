package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/iac-code-agui/iac-code-agui/internal/config"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/redis/go-redis/v9"
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
	cfg, err := config.Load(args, getenv)
	if code, done := loadFailed(err, config.Usage(), stdout, stderr, lang); done {
		return code
	}
	if storeKind(cfg) != "redis" {
		fmt.Fprintln(stderr, "export-state: --state-store must name the Redis store to export from")
		return 2
	}
	// go-redis's own messages (a failed dial) as log lines on stderr.
	redis.SetLogger(redisLogger{slog.New(slog.NewTextHandler(stderr, nil))})
	c, err := redisstore.Open(cfg.StateStore, cfg.RedisPassword)
	if err != nil {
		fmt.Fprintln(stderr, "export-state:", err)
		return 1
	}
	defer c.Close()
	files := filestore.New(cfg.StateDir)
	var exported, present, failed int
	err = redisstore.New(c, cfg.RedisKeyPrefix).Threads(ctx, func(key string, t *state.Thread, err error) error {
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
