package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/config"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
)

// storePingTimeout bounds the start-up probe of a Redis store.
const storePingTimeout = 5 * time.Second

// openStore returns the configured thread store and its closer. A Redis
// store that does not answer at start is still used: requests get 503
// STATE_UNAVAILABLE until it answers, and nothing falls back to files.
func openStore(ctx context.Context, cfg *config.Config, logger *slog.Logger) (state.Store, func(), error) {
	if cfg.StateStore == "" || cfg.StateStore == config.StateStoreFile {
		return state.NewFileStore(cfg.StateDir), func() {}, nil
	}
	c, err := redisstore.Open(cfg.StateStore, cfg.RedisPassword)
	if err != nil {
		return nil, nil, errors.New(err.Error())
	}
	pctx, cancel := context.WithTimeout(ctx, storePingTimeout)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		// The error names the address, never the password.
		logger.Warn("Redis state store not reachable yet; requests get STATE_UNAVAILABLE until it is", "error", err)
	}
	return redisstore.New(c, cfg.RedisKeyPrefix), func() { _ = c.Close() }, nil
}

// storeKind names the store in logs without its URL, which may hold a
// password.
func storeKind(cfg *config.Config) string {
	if cfg.StateStore == "" || cfg.StateStore == config.StateStoreFile {
		return config.StateStoreFile
	}
	return "redis"
}
