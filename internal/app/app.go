package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/buildinfo"
	"github.com/iac-code-agui/iac-code-agui/internal/config"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/metrics"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/tracing"
)

// demoAgentService is the demo agent's service.name in traces, embedded or
// on its own.
const demoAgentService = "iac-code-agui-demo-agent"

// Main runs the command line and returns the process exit status.
func Main(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return mainContext(context.Background(), args, getenv, stdout, stderr)
}

// mainContext is Main with a parent context, so tests can stop the server
// without signalling their own process.
func mainContext(parent context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return mainWith(parent, args, getenv, stdout, stderr, defaultChildTimings)
}

// mainWith is mainContext with the managed child's timings.
func mainWith(parent context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, tm childTimings) int {
	lang := i18n.FromLocaleEnv(getenv)
	if len(args) > 0 {
		switch args[0] {
		case "demo-agent":
			return runDemoAgent(args[1:], getenv, stdout, stderr, lang)
		case "healthcheck":
			return runHealthcheck(parent, args[1:], getenv, stdout, stderr, lang)
		case "version":
			return printVersion(args[1:], stdout, stderr)
		case "import-state":
			return runImportState(parent, args[1:], getenv, stdout, stderr, lang)
		case "export-state":
			return runExportState(parent, args[1:], getenv, stdout, stderr, lang)
		case "help":
			fmt.Fprint(stdout, config.Usage())
			return 0
		}
	}
	cfg, err := config.Load(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, config.Usage())
		return 0
	}
	if errors.Is(err, config.ErrVersion) {
		return printVersion(nil, stdout, stderr)
	}
	var ce *config.Error
	if err != nil && !errors.As(err, &ce) {
		// An unknown flag or a stray argument: a usage error.
		fmt.Fprintln(stderr, err.Error())
		fmt.Fprint(stderr, config.Usage())
		return 2
	}
	if err != nil {
		printError(stderr, lang, err)
		return 1
	}
	logger := newLogger(cfg.LogFormat, cfg.Debug, cfg.LogStdout, stdout, stderr)
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, cfg, getenv, logger, tm); err != nil {
		printError(stderr, lang, err)
		return 1
	}
	return 0
}

// loadFailed ends a sub-command whose arguments did not load: it prints
// usage for -h/--help (exit 0) or the translated error (exit 1). done is
// false when err is nil.
func loadFailed(err error, usage string, stdout, stderr io.Writer, lang i18n.Lang) (code int, done bool) {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return 0, true
	}
	if err != nil {
		printError(stderr, lang, err)
		return 1, true
	}
	return 0, false
}

func printError(w io.Writer, lang i18n.Lang, err error) {
	var ce *config.Error
	if errors.As(err, &ce) {
		fmt.Fprintln(w, ce.Localized(lang))
		return
	}
	fmt.Fprintln(w, err.Error())
}

// serve starts the upstream, the adapter and the HTTP server, and blocks
// until ctx is cancelled or the idle monitor stops the server.
func serve(ctx context.Context, cfg *config.Config, getenv func(string) string, logger *slog.Logger, tm childTimings) error {
	// The port first: a busy port must not cost a child process start.
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	m := metrics.New()
	bi := buildinfo.Get()
	// Tracing first and its shutdown last: the spans of the runs that end
	// during the shutdown are flushed too (bounded, tracing.ShutdownTimeout).
	tr := tracing.Setup(ctx, getenv, tracing.Options{Version: bi.Version, Logger: logger, Failed: m.TraceSpansDropped})
	defer func() { _ = tr.Shutdown(context.Background()) }()
	// Lines written inside a traced request carry its trace and span ids.
	logger = tr.Logger(logger)
	// One writer fence for the adapter and the embedded agent's handoff
	// service, which guard the same thread files.
	wf := writerFence(getenv)
	up, err := startUpstream(ctx, cfg, getenv, logger, tm, tr, wf)
	if err != nil {
		return err
	}
	defer up.stop()
	if up.kind == "demo" && cfg.StateDirDefault {
		// The demo's threads stay out of a user's real iac-code folder.
		cfg.StateDir = demoStateDir()
	}
	store, rc, closeStore, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeStore()
	client := a2a.New(up.url, up.token, append(upstreamOptions(cfg), a2a.WithTracing(tr.TracerProvider(), tr.Propagator()))...)
	ad := adapter.New(adapter.Options{
		Store:        tr.Store(store, storeKind(cfg)),
		Upstream:     adapter.A2A(client),
		Fence:        wf,
		AllowedRoots: request.AllowedRoots(cfg.AllowedCWDs),
		Logger:       logger,
		Observer:     m,
		// A workspace in the state directory would let the agent write
		// thread files (protocol.md §3.4).
		ExcludedWorkspaces: []string{cfg.StateDir},
		CopilotKitCompat:   cfg.Compat == config.CompatCopilotKit,
		Tracer:             tr.Tracer("internal/adapter"),
		Generic:            cfg.Generic(),
	})
	opts := server.Options{Adapter: ad, AuthToken: cfg.AuthToken, Version: bi.Version, Logger: logger, Metrics: m,
		StreamWriteTimeout: cfg.StreamWriteTimeout,
		AllowedHosts:       allowedHosts(cfg), ListenAll: listensOnAll(cfg.Host), CORSOrigins: cfg.CORSOrigins, Upstream: up.kind,
		Handoff: client}
	if cfg.Generic() {
		// A generic agent has no session-handoff service: the routes
		// answer as its 404 would, and nothing is proxied to it.
		opts.Handoff = nil
	}
	cl := startCluster(ctx, cfg, rc, ad.Busy, logger, tr)
	if cl != nil {
		opts.Cluster = cl.Cluster
	}
	h := server.New(opts)
	srv := server.NewHTTPServer(addr, tr.Handler(h, h.SpanName, h.Traced), server.Timeouts{})
	silent := trackSilentConns(srv)
	logger.Info("AG-UI adapter listening", "url", "http://"+ln.Addr().String()+"/", "a2a", up.url, "upstream", up.kind,
		"a2aProfile", cfg.A2AProfile, "stateStore", storeKind(cfg), "stateDir", cfg.StateDir, "compat", cfg.Compat, "version", bi.Version, "commit", bi.Commit, "auth", cfg.AuthToken != "",
		"tracing", tr.Enabled())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if cfg.IdleShutdown > 0 {
		go watchIdle(ctx, cancel, ad, cfg.IdleShutdown, logger)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// From now on a run whose upstream fails ends ADAPTER_SHUTTING_DOWN:
	// a managed child may be stopped by the same signal.
	ad.Drain()
	logger.Info("AG-UI adapter shutting down")
	// Threads nothing runs on here move to another replica at once; the
	// others as their runs end, at the latest below.
	cl.drain(logger)
	// Open runs have shutdownGrace to end; then the adapter ends the
	// rest with RUN_ERROR ADAPTER_SHUTTING_DOWN, leaving their threads
	// resumable, and their streams get stopGrace more to say so.
	grace, gcancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer gcancel()
	stopRuns := context.AfterFunc(grace, ad.StopRuns)
	defer stopRuns()
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace+stopGrace)
	defer scancel()
	// The listener stays open until the runs of this replica's threads
	// end, so that their cancels and observations still reach them,
	// straight or forwarded; requests of other threads are answered
	// OWNER_UNAVAILABLE meanwhile, and retried on another replica.
	cl.wait(sctx)
	if err := silent.shutdown(sctx, srv); err != nil {
		_ = srv.Close()
	}
	cl.handOver(logger)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// shutdownGrace is how long a graceful shutdown lets open runs end by
// themselves; stopGrace how long it then waits for the streams the
// adapter ended (docs/operations.md, "Stopping").
const (
	shutdownGrace = 10 * time.Second
	stopGrace     = 2 * time.Second
)

// watchIdle stops the server when the adapter has been idle for idle
// (protocol.md §2.10).
func watchIdle(ctx context.Context, stop context.CancelFunc, ad *adapter.Adapter, idle time.Duration, logger *slog.Logger) {
	every := min(5*time.Second, max(100*time.Millisecond, idle/4))
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if ok, since := ad.Idle(); ok && since >= idle {
				logger.Info("AG-UI adapter idle; shutting down", "idleSeconds", since.Seconds())
				stop()
				return
			}
		}
	}
}

func runDemoAgent(args []string, getenv func(string) string, stdout, stderr io.Writer, lang i18n.Lang) int {
	host, port, token, err := config.LoadDemoAgent(args, getenv)
	if code, done := loadFailed(err, config.DemoAgentUsage(), stdout, stderr, lang); done {
		return code
	}
	logger := newLogger(config.LogFormatText, false, false, stdout, stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tr := tracing.Setup(ctx, getenv, tracing.Options{ServiceName: demoAgentService, Version: buildinfo.Get().Version, Logger: logger})
	defer func() { _ = tr.Shutdown(context.Background()) }()
	logger = tr.Logger(logger)
	if err := demoagent.Run(ctx, host, port, demoagent.Options{Token: token, Logger: logger, BackupDir: getenv(demoagent.BackupDirEnv),
		TracerProvider: tr.TracerProvider(), Propagator: tr.Propagator()}); err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	return 0
}
