package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/iac-code-agui/iac-code-agui/internal/cluster"
	"github.com/iac-code-agui/iac-code-agui/internal/config"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
)

// storePingTimeout bounds the start-up probe of a Redis store.
const storePingTimeout = 5 * time.Second

// openStore returns the configured thread store, its Redis client (nil
// for files) and its closer. A Redis store that does not answer at start
// is still used: requests get 503 STATE_UNAVAILABLE until it answers, and
// nothing falls back to files.
func openStore(ctx context.Context, cfg *config.Config, logger *slog.Logger) (state.Store, redis.UniversalClient, func(), error) {
	if cfg.StateStore == "" || cfg.StateStore == config.StateStoreFile {
		fs := filestore.New(cfg.StateDir)
		// What an earlier version of this gateway kept beside threads/
		// (docs/decisions.md, "Leftovers of the journal"): the start fails
		// while a journal of it still holds saves the thread files lack.
		if err := fs.RetireLegacy(); err != nil {
			return nil, nil, nil, fmt.Errorf("state directory: %w", err)
		}
		// Temporary files of a process killed mid-write (protocol.md §8.5),
		// in the background: listing 100,000 thread files must not delay
		// the start (docs/benchmarks.md). A save's own temporary file is
		// younger than StaleTempAge, so the two never meet.
		swept := make(chan struct{})
		go func() {
			defer close(swept)
			if n, err := fs.RemoveStaleTemps(filestore.StaleTempAge); err != nil {
				logger.Warn("Could not remove leftover temporary state files", "error", err)
			} else if n > 0 {
				logger.Info("Removed leftover temporary state files", "count", n)
			}
		}()
		return fs, nil, func() { <-swept }, nil
	}
	c, err := redisstore.Open(cfg.StateStore, cfg.RedisPassword)
	if err != nil {
		return nil, nil, nil, errors.New(err.Error())
	}
	pctx, cancel := context.WithTimeout(ctx, storePingTimeout)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		// The error names the address, never the password.
		logger.Warn("Redis state store not reachable yet; requests get STATE_UNAVAILABLE until it is", "error", err)
	}
	return redisstore.New(c, cfg.RedisKeyPrefix), c, func() { _ = c.Close() }, nil
}

// storeKind names the store in logs without its URL, which may hold a
// password.
func storeKind(cfg *config.Config) string {
	if cfg.StateStore == "" || cfg.StateStore == config.StateStoreFile {
		return config.StateStoreFile
	}
	return "redis"
}

// startCluster turns on thread ownership when a Redis store and an
// advertised URL are configured; nil otherwise. Its renewal loop stops,
// releasing every lease, when ctx ends (SIGTERM), so that the threads move
// to another replica at once.
func startCluster(ctx context.Context, cfg *config.Config, c redis.UniversalClient, busy func(context.Context, string) bool, logger *slog.Logger) *cluster.Cluster {
	if c == nil || cfg.AdvertiseURL == "" {
		return nil
	}
	cl := cluster.New(cluster.Options{
		Client: c, Prefix: cfg.RedisKeyPrefix, AdvertiseURL: cfg.AdvertiseURL,
		Token: cfg.ReplicaToken, TTL: cfg.LeaseTTL, Busy: busy, Logger: logger,
	})
	go cl.Run(ctx)
	logger.Info("Thread ownership on: requests of threads other replicas own are forwarded", "replica", cl.ID(), "advertise", cfg.AdvertiseURL)
	return cl
}
