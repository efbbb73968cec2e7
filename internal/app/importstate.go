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
	cfg, err := config.Load(args, getenv)
	if code, done := loadFailed(err, config.Usage(), stdout, stderr, lang); done {
		return code
	}
	if storeKind(cfg) != "redis" {
		fmt.Fprintln(stderr, "import-state: --state-store must name the Redis store to import into")
		return 2
	}
	// go-redis's own messages (a failed dial) as log lines on stderr.
	redis.SetLogger(redisLogger{slog.New(slog.NewTextHandler(stderr, nil))})
	c, err := redisstore.Open(cfg.StateStore, cfg.RedisPassword)
	if err != nil {
		fmt.Fprintln(stderr, "import-state:", err)
		return 1
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
