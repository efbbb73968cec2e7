package demoagent

import (
	"container/list"
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Version is the version reported by /health and the agent card.
const Version = "0.1.0-demo"

// DefaultStepDelay is the pause between scripted frames used by Run.
const DefaultStepDelay = 5 * time.Millisecond

// BackupDirEnv names the variable that sets Options.BackupDir for the
// demo-agent sub-command and the embedded agent: iac-code's own.
const BackupDirEnv = "IAC_CODE_CONFIG_BACKUP_DIR"

// maxBody caps a JSON-RPC request body (payload too large → -32600).
const maxBody = 16 << 20

// Options configures the demo agent. Zero values take the defaults.
type Options struct {
	Token        string        // bearer token; empty = no authentication
	Logger       *slog.Logger  // nil = discard
	PingInterval time.Duration // SSE ": ping" comments; 0 = 15s, negative = none
	StepDelay    time.Duration // pause between scripted frames; 0 = none

	// Retention (see retention.go). A task that runs or waits for input
	// is never evicted; these bound the idle ones and the contexts left
	// without tasks. Values ≤ 0 take the Default… constants.
	MaxIdleTasks     int           // idle tasks kept, newest first
	TaskRetention    time.Duration // an idle task is dropped after this long
	MaxIdleContexts  int           // contexts without tasks kept
	ContextRetention time.Duration // a context without tasks is dropped after this long

	// BackupDir, when set, is a session backup directory shared with other
	// agents, like iac-code's IAC_CODE_CONFIG_BACKUP_DIR (backup.go): a
	// pipeline waiting here can be restored and answered on another agent.
	BackupDir string

	// Handoff, when set, enables the session-handoff service (handoff.go).
	Handoff *HandoffOptions

	// TracerProvider and Propagator, both set, make the agent continue
	// its callers' traces (trace.go); nil: no spans.
	TracerProvider trace.TracerProvider
	Propagator     propagation.TextMapPropagator
}

// Agent is the embedded iac-code-compatible A2A 1.0 server. It is an
// http.Handler.
type Agent struct {
	opts      Options
	log       *slog.Logger
	base      context.Context // lives as long as the agent; runs derive from it
	stop      context.CancelFunc
	mu        sync.Mutex
	tasks     map[string]*taskRec
	ctxs      map[string]*ctxRec
	idleTasks *list.List // of idleEntry, oldest first
	idleCtxs  *list.List // of idleEntry, oldest first
	runsWG    sync.WaitGroup
	bkMu      sync.Mutex // serialises the backup files and ctxRec.backup
	journal   inputJournal
	tracer    trace.Tracer // nil: no spans (trace.go)
}

// New builds an agent.
func New(opts Options) *Agent {
	if opts.PingInterval == 0 {
		opts.PingInterval = 15 * time.Second
	}
	if opts.MaxIdleTasks <= 0 {
		opts.MaxIdleTasks = DefaultMaxIdleTasks
	}
	if opts.TaskRetention <= 0 {
		opts.TaskRetention = DefaultTaskRetention
	}
	if opts.MaxIdleContexts <= 0 {
		opts.MaxIdleContexts = DefaultMaxIdleContexts
	}
	if opts.ContextRetention <= 0 {
		opts.ContextRetention = DefaultContextRetention
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &Agent{opts: opts, log: lg, base: ctx, stop: cancel,
		tasks: map[string]*taskRec{}, ctxs: map[string]*ctxRec{}, idleTasks: list.New(), idleCtxs: list.New()}
	if opts.TracerProvider != nil && opts.Propagator != nil {
		a.tracer = opts.TracerProvider.Tracer("github.com/iac-code-agui/iac-code-agui/internal/demoagent")
	}
	return a
}

// Close cancels every running task and waits for the executors; open
// streams end. The agent answers nothing useful afterwards: it is for
// whoever serves it (Server.Close calls it).
func (a *Agent) Close() {
	a.stop()
	a.runsWG.Wait()
}

// ServeHTTP routes every request after the bearer check (upstream.md
// §1.4: every route, /health included).
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !a.authorized(r) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "Unauthorized"})
		return
	}
	switch {
	case r.URL.Path == "/" && r.Method == http.MethodPost:
		a.serveRPC(w, r)
	case r.URL.Path == "/health" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"status": "healthy", "version": Version, "mode": "normal"})
	case r.URL.Path == "/.well-known/agent-card.json" && r.Method == http.MethodGet:
		w.Header().Set("Cache-Control", "public, max-age=60")
		writeJSON(w, http.StatusOK, a.card(r))
	case r.URL.Path == "/iac-code/pipeline/state" && r.Method == http.MethodGet:
		a.servePipelineState(w, r)
	case r.URL.Path == "/iac-code/session/ensure-restored" && r.Method == http.MethodPost:
		a.serveEnsureRestored(w, r)
	case a.opts.Handoff != nil && handoffRoute(r):
		a.serveHandoff(w, r, strings.TrimPrefix(r.URL.Path, "/iac-code/handoff/"))
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "Not Found"})
	}
}

// handoffRoute matches the session-handoff routes as iac-code serves them:
// GET capabilities, POST the others.
func handoffRoute(r *http.Request) bool {
	switch r.URL.Path {
	case "/iac-code/handoff/capabilities":
		return r.Method == http.MethodGet
	case "/iac-code/handoff/prepare", "/iac-code/handoff/discover", "/iac-code/handoff/restore",
		"/iac-code/handoff/authorize", "/iac-code/handoff/apply-input":
		return r.Method == http.MethodPost
	}
	return false
}

func (a *Agent) authorized(r *http.Request) bool {
	if a.opts.Token == "" {
		return true
	}
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(h[len(prefix):]), []byte(a.opts.Token)) == 1
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"Internal error"}`)
	}
	writeRaw(w, code, b)
}

func writeRaw(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func (a *Agent) card(r *http.Request) map[string]any {
	base := "http://" + r.Host
	return map[string]any{
		"name":               "iac-code",
		"description":        "Embedded iac-code-compatible demo agent (scripted, deterministic).",
		"version":            Version,
		"protocolVersion":    "1.0",
		"url":                base + "/",
		"preferredTransport": "JSONRPC",
		"supportedInterfaces": []any{
			map[string]any{"url": base + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
		},
		"additionalInterfaces": []any{map[string]any{"url": base + "/", "transport": "JSONRPC"}},
		"defaultInputModes":    []string{"text/plain", "application/json", "image/png", "image/jpeg"},
		"defaultOutputModes":   []string{"text/plain"},
		"skills":               []any{map[string]any{"id": "iac", "name": "Infrastructure as code", "description": "Scripted IaC answers", "tags": []string{"iac"}}},
		"securitySchemes":      map[string]any{"bearerAuth": map[string]any{"httpAuthSecurityScheme": map[string]any{"scheme": "bearer"}}},
		"capabilities": map[string]any{
			"streaming":         true,
			"pushNotifications": false,
			"extendedAgentCard": false,
			"extensions": []any{
				map[string]any{"uri": "urn:iac-code:a2a:artifact-metadata:v1", "required": false},
				map[string]any{"uri": "urn:iac-code:a2a:thinking-exposure:v1", "required": false,
					"params": map[string]any{"enabledTypes": []string{"raw_thinking", "tool_trace"}}},
				map[string]any{"uri": pipelineExt, "required": false, "params": map[string]any{
					"schemaVersion": "1.0", "enabled": false, "mode": "normal",
					"supportsEventBatching": true, "eventBatchMetadataPath": "metadata.iac_code.pipelineBatch.events",
					"maxBatchEvents": 1024, "maxBatchBytes": 1048576, "maxBatchDelayMs": 20,
					"supportsSnapshot": true, "supportsReplay": true, "supportsInterrupts": true,
					"supportsParallelCandidates": true, "stateEndpoint": "/iac-code/pipeline/state",
				}},
			},
		},
	}
}

const pipelineExt = "urn:iac-code:a2a:pipeline-events:v1"
