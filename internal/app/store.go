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
	"github.com/iac-code-agui/iac-code-agui/internal/reqid"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/iac-code-agui/iac-code-agui/internal/tracing"
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
	redis.SetLogger(redisLogger{logger})
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

// redisLogger sends go-redis's own messages (a failed dial, a pool
// notice) through the process logger, so they share its format and, when
// the command came from a request, carry its id.
type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	attrs := []slog.Attr{slog.String("detail", fmt.Sprintf(format, v...))}
	if ctx == nil {
		ctx = context.Background()
	} else if id := reqid.From(ctx); id != "" {
		attrs = append(attrs, slog.String("requestId", id))
	}
	r.l.LogAttrs(ctx, slog.LevelWarn, "Redis client message", attrs...)
}

// clusterRun is a started Cluster and the end of its renewal loop.
type clusterRun struct {
	*cluster.Cluster
	stop context.CancelFunc
	done chan struct{}
}

// startCluster turns on thread ownership when a Redis store and an
// advertised URL are configured; nil otherwise. Its renewal loop runs
// until handOver, not until the signal: the leases of runs that finish
// during the shutdown stay renewed.
func startCluster(ctx context.Context, cfg *config.Config, c redis.UniversalClient, busy func(context.Context, string) bool, logger *slog.Logger, tr *tracing.Tracing) *clusterRun {
	if c == nil || cfg.AdvertiseURL == "" {
		return nil
	}
	cl := cluster.New(cluster.Options{
		Client: c, Prefix: cfg.RedisKeyPrefix, AdvertiseURL: cfg.AdvertiseURL, ReplicaURLs: cfg.ReplicaURLs,
		Token: cfg.ReplicaToken, TTL: cfg.LeaseTTL, Busy: busy, Logger: logger, ForwardTransport: tr.ForwardTransport,
	})
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	cr := &clusterRun{Cluster: cl, stop: stop, done: make(chan struct{})}
	go func() { defer close(cr.done); cl.Run(rctx) }()
	logger.Info("Thread ownership on: requests of threads other replicas own are forwarded", "replica", cl.ID(), "advertise", cfg.AdvertiseURL,
		"replicaUrls", len(cfg.ReplicaURLs))
	return cr
}

// handOverTimeout bounds each step of a stopping replica's hand-over
// that waits on Redis.
const handOverTimeout = 5 * time.Second

// drain is the first step of a stopping replica's hand-over: every thread
// no request holds (a thread waiting on interrupts too) is released now,
// every other one as its last request ends.
func (cr *clusterRun) drain(logger *slog.Logger) {
	if cr == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), handOverTimeout)
	defer cancel()
	cr.Drain(ctx)
	logger.Info("Releasing thread leases for the hand-over", "held", cr.Held())
}

// wait blocks until no request of a thread this replica holds is in
// flight (the drain's second step), or ctx ends.
func (cr *clusterRun) wait(ctx context.Context) {
	if cr == nil {
		return
	}
	select {
	case <-cr.Drained():
	case <-ctx.Done():
	}
}

// handOver is the last step, once the server's requests have ended: the
// renewal loop stops and every lease still held is released.
func (cr *clusterRun) handOver(logger *slog.Logger) {
	if cr == nil {
		return
	}
	cr.stop()
	<-cr.done
	ctx, cancel := context.WithTimeout(context.Background(), handOverTimeout)
	defer cancel()
	cr.Close(ctx)
	if n := cr.Held(); n > 0 {
		logger.Warn("Some thread leases could not be released; they lapse after --lease-ttl", "held", n)
	}
}
