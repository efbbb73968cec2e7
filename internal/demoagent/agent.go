package demoagent

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Version is the version reported by /health and the agent card.
const Version = "0.1.0-demo"

// DefaultStepDelay is the pause between scripted frames used by Run.
const DefaultStepDelay = 5 * time.Millisecond

// maxBody caps a JSON-RPC request body (payload too large → -32600).
const maxBody = 16 << 20

// Options configures the demo agent.
type Options struct {
	Token        string        // bearer token; empty = no authentication
	Logger       *slog.Logger  // nil = discard
	PingInterval time.Duration // SSE ": ping" comments; 0 = 15s, negative = none
	StepDelay    time.Duration // pause between scripted frames; 0 = none
}

// Part is a recorded message part (what a Call carried).
type Part struct {
	Text      string          `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

// Call is one JSON-RPC call the agent received. It holds the metadata key
// names only, never their values, which may be secrets.
type Call struct {
	Method       string
	TaskID       string
	ContextID    string
	MessageID    string
	Parts        []Part
	MetadataKeys []string // sorted keys of message.metadata.iac_code
}

// Agent is the embedded iac-code-compatible A2A 1.0 server. It is an
// http.Handler.
type Agent struct {
	opts   Options
	log    *slog.Logger
	base   context.Context // lives as long as the agent; runs derive from it
	stop   context.CancelFunc
	mu     sync.Mutex
	tasks  map[string]*taskRec
	ctxs   map[string]*ctxRec
	calls  []Call
	runsWG sync.WaitGroup
}

// New builds an agent.
func New(opts Options) *Agent {
	if opts.PingInterval == 0 {
		opts.PingInterval = 15 * time.Second
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Agent{opts: opts, log: lg, base: ctx, stop: cancel,
		tasks: map[string]*taskRec{}, ctxs: map[string]*ctxRec{}}
}

// shutdown cancels every running task and waits for the executors.
func (a *Agent) shutdown() {
	a.stop()
	a.runsWG.Wait()
}

// Calls returns a copy of the JSON-RPC calls received so far.
func (a *Agent) Calls() []Call {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Call(nil), a.calls...)
}

// ContextHeaders returns a copy of the llm_headers bound to a context (nil
// when none).
func (a *Agent) ContextHeaders(contextID string) map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.ctxs[contextID]
	if c == nil || c.headers == nil {
		return nil
	}
	out := make(map[string]string, len(c.headers))
	for k, v := range c.headers {
		out[k] = v
	}
	return out
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
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "Not Found"})
	}
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

func (a *Agent) record(method string, msg *inMessage, taskID string) {
	c := Call{Method: method, TaskID: taskID}
	if msg != nil {
		c.TaskID, c.ContextID, c.MessageID = msg.TaskID, msg.ContextID, msg.MessageID
		for _, p := range msg.Parts {
			c.Parts = append(c.Parts, Part{Text: p.Text, Data: p.Data, MediaType: p.MediaType})
		}
		for k := range msg.iac() {
			c.MetadataKeys = append(c.MetadataKeys, k)
		}
		sort.Strings(c.MetadataKeys)
	}
	a.mu.Lock()
	a.calls = append(a.calls, c)
	a.mu.Unlock()
}
