package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/config"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/fence"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/tracing"
)

// upstream is the A2A agent the adapter talks to.
type upstream struct {
	url, token string
	kind       string // "url", "managed", "demo" (/health's upstream member)
	stop       func()
}

// childTimings bound a managed child's readiness and stop (protocol.md
// §1.8). The product uses defaultChildTimings; tests pass shorter ones.
type childTimings struct {
	ready, poll, probe, stop time.Duration
}

var defaultChildTimings = childTimings{ready: 20 * time.Second, poll: 100 * time.Millisecond, probe: 500 * time.Millisecond, stop: 5 * time.Second}

// startUpstream picks the upstream: --a2a-url when set; the embedded demo
// agent with --demo; else a managed `iac-code a2a` child when iac-code is
// on PATH; else the demo agent, but only without any other configuration
// (config.DemoFallback): a configured deployment without its agent stops
// with a message saying what to do.
func startUpstream(ctx context.Context, cfg *config.Config, getenv func(string) string, logger *slog.Logger, tm childTimings, tr *tracing.Tracing, wf *fence.Fence) (*upstream, error) {
	if cfg.A2AURL != "" {
		return &upstream{url: cfg.A2AURL, token: cfg.A2AToken, kind: "url", stop: func() {}}, nil
	}
	why := "--demo: using the embedded demo A2A agent (scripted, no LLM)"
	if !cfg.Demo {
		if path, err := exec.LookPath("iac-code"); err == nil {
			return startChild(ctx, path, cfg, getenv, logger, tm)
		}
		if !cfg.DemoFallback() {
			return nil, &config.Error{Msg: i18n.MsgNoUpstream}
		}
		why = "No --a2a-url and no iac-code on PATH: using the embedded demo A2A agent (scripted, no LLM)"
	}
	token := randomToken()
	// The embedded agent outlives the signal that stops the server (up.stop
	// closes it last), so that runs get the shutdown's grace to end rather
	// than an upstream cut at once.
	srv, err := demoagent.Start(context.WithoutCancel(ctx), "127.0.0.1:0", demoagent.Options{Token: token, Logger: logger.With("component", "demo-agent"),
		BackupDir: getenv(demoagent.BackupDirEnv), Handoff: demoHandoff(cfg, getenv, wf),
		TracerProvider: tr.ServiceProvider(demoAgentService), Propagator: tr.Propagator()})
	if err != nil {
		return nil, err
	}
	// A warning: a scripted agent must never pass for the real one.
	logger.Warn(why, "url", srv.URL)
	return &upstream{url: srv.URL, token: token, kind: "demo", stop: func() { _ = srv.Close() }}, nil
}

// upstreamOptions are the A2A client's options for the profile: a generic
// agent names its JSON-RPC URL in its card.
func upstreamOptions(cfg *config.Config) []a2a.Option {
	if cfg.Generic() {
		return []a2a.Option{a2a.WithAgentCard()}
	}
	return nil
}

// randomToken is 32 random bytes, URL-safe base64, as the original's.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startChild starts `iac-code a2a` on a free loopback port with a random
// token and waits until its /health answers (protocol.md §1.8).
func startChild(ctx context.Context, path string, cfg *config.Config, getenv func(string) string, logger *slog.Logger, tm childTimings) (*upstream, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	token := randomToken()
	cmd := exec.Command(path, "a2a", "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--thinking-exposure", "all")
	cmd.Env = append(os.Environ(), "IACCODE_A2A_HTTP_TOKEN="+token)
	if v := getenv("IAC_CODE_AGUI_ALLOWED_CWDS"); v != "" && getenv("IACCODE_A2A_ALLOWED_CWDS") == "" {
		cmd.Env = append(cmd.Env, "IACCODE_A2A_ALLOWED_CWDS="+v)
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() { stopChild(cmd, exited, tm.stop) }
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	client := a2a.New(url, token)
	deadline := time.Now().Add(tm.ready)
	for {
		select {
		case <-exited:
			return nil, &config.Error{Msg: i18n.MsgA2AExitedDuringStartup, Args: []any{cmd.ProcessState.ExitCode()}}
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, tm.probe)
		err := client.Health(pctx)
		cancel()
		if err == nil {
			logger.Info("Managed iac-code A2A process ready", "url", url, "pid", cmd.Process.Pid)
			return &upstream{url: url, token: token, kind: "managed", stop: stop}, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, &config.Error{Msg: i18n.MsgA2ANotReady}
		}
		time.Sleep(tm.poll)
	}
}

// stopChild terminates the child, then kills it after a grace period.
func stopChild(cmd *exec.Cmd, exited <-chan struct{}, wait time.Duration) {
	select {
	case <-exited:
		return
	default:
	}
	_ = signalGroup(cmd, syscall.SIGTERM)
	select {
	case <-exited:
		return
	case <-time.After(wait):
	}
	if err := signalGroup(cmd, syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, syscall.ESRCH) {
		fmt.Fprintln(os.Stderr, "kill managed A2A process:", err)
	}
	select {
	case <-exited:
	case <-time.After(wait):
	}
}
