package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/config"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/redis/go-redis/v9"
)

// runImportState serves `import-state`: it copies every thread file under
// --state-dir (written by this adapter or by the original) into the Redis
// store named by --state-store, with the same configuration sources as
// the server. A thread already in Redis is left alone. It exits 0 when
// every file was imported or already present, else 1.
func runImportState(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, lang i18n.Lang) int {
	cfg, c, code := openRedisFor("import-state", "to import into", args, getenv, stdout, stderr, lang)
	if c == nil {
		return code
	}
	defer c.Close()
	store := redisstore.New(c, cfg.RedisKeyPrefix)
	dir := filepath.Join(cfg.StateDir, "threads")
	entries, err := os.ReadDir(dir)
	if err != nil {
		fmt.Fprintln(stderr, "import-state:", err)
		return 1
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var imported, present, failed int
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") || e.Type()&fs.ModeType != 0 {
			continue // temporary files, links, directories
		}
		doc, err := readThreadFile(filepath.Join(dir, name))
		if err == nil {
			err = store.Import(ctx, doc)
		}
		switch {
		case err == nil:
			imported++
		case errors.Is(err, redisstore.ErrExists):
			present++
		default:
			failed++
			fmt.Fprintf(stderr, "import-state: %s: %v\n", name, err)
		}
	}
	fmt.Fprintf(stdout, "imported %d, already present %d, failed %d\n", imported, present, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

// readThreadFile reads and validates one thread file; its name must be the
// file key of the thread id it holds, as the file store writes it.
func readThreadFile(path string) (*state.Thread, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var head struct {
		ThreadID string `json:"threadId"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, errors.New("not a thread document")
	}
	key, err := state.FileKey(head.ThreadID)
	if err != nil || key+".json" != filepath.Base(path) {
		return nil, errors.New("the file name does not match its threadId")
	}
	return state.Decode(data, head.ThreadID)
}

// openRedisFor loads the server's configuration for the sub-command name
// and opens the Redis store it names. A nil client comes with the exit
// code: 2 when the store is not Redis (purpose says what it is for), 1
// when it cannot be opened, the configuration's own code when that
// failed. go-redis's own messages (a failed dial) become log lines on
// stderr.
func openRedisFor(name, purpose string, args []string, getenv func(string) string, stdout, stderr io.Writer, lang i18n.Lang) (*config.Config, redis.UniversalClient, int) {
	cfg, err := config.Load(args, getenv)
	if code, done := loadFailed(err, config.Usage(), stdout, stderr, lang); done {
		return nil, nil, code
	}
	if storeKind(cfg) != "redis" {
		fmt.Fprintf(stderr, "%s: --state-store must name the Redis store %s\n", name, purpose)
		return nil, nil, 2
	}
	redis.SetLogger(redisLogger{slog.New(slog.NewTextHandler(stderr, nil))})
	c, err := redisstore.Open(cfg.StateStore, cfg.RedisPassword)
	if err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return nil, nil, 1
	}
	return cfg, c, 0
}
