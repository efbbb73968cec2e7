package demoagenttest

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// maxBody matches the agent's cap on a JSON-RPC body; a larger one is
// passed through unrecorded and the agent refuses it.
const maxBody = 16 << 20

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
	TaskID       string // params.message.taskId, or params.id of task methods
	ContextID    string
	MessageID    string
	Parts        []Part
	MetadataKeys []string // sorted keys of the iac_code metadata the agent reads
}

// methods are the A2A 1.0 methods the agent serves; other calls are
// refused by it and not recorded.
var methods = map[string]bool{
	"SendMessage": true, "SendStreamingMessage": true, "GetTask": true,
	"CancelTask": true, "SubscribeToTask": true, "ListTasks": true,
}

// recorder is an http.Handler in front of the agent recording every
// authorised A2A 1.0 JSON-RPC call before the agent sees it, so a call
// whose stream stays open is already visible.
type recorder struct {
	next  http.Handler
	token string
	mu    sync.Mutex
	log   []Call
	bound map[string]map[string]string // llm_headers per context id
}

func newRecorder(next http.Handler, token string) *recorder {
	return &recorder{next: next, token: token, bound: map[string]map[string]string{}}
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/" && rc.authorized(r) &&
		strings.TrimSpace(r.Header.Get("A2A-Version")) == "1.0" {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err == nil && len(body) <= maxBody {
			rc.record(body)
		}
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	}
	rc.next.ServeHTTP(w, r)
}

func (rc *recorder) authorized(r *http.Request) bool {
	if rc.token == "" {
		return true
	}
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(h[len(prefix):]), []byte(rc.token)) == 1
}

type rpcMessage struct {
	MessageID string `json:"messageId"`
	ContextID string `json:"contextId"`
	TaskID    string `json:"taskId"`
	Parts     []Part `json:"parts"`
	Metadata  struct {
		IacCode map[string]json.RawMessage `json:"iac_code"`
	} `json:"metadata"`
}

func (rc *recorder) record(body []byte) {
	var req struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  struct {
			ID       string      `json:"id"`
			Message  *rpcMessage `json:"message"`
			Metadata struct {
				IacCode map[string]json.RawMessage `json:"iac_code"`
			} `json:"metadata"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil || req.JSONRPC != "2.0" || !methods[req.Method] {
		return
	}
	c := Call{Method: req.Method, TaskID: req.Params.ID}
	var iac map[string]json.RawMessage
	if m := req.Params.Message; m != nil {
		c.TaskID, c.ContextID, c.MessageID, c.Parts = m.TaskID, m.ContextID, m.MessageID, m.Parts
		// Request-level metadata wins when present, not merged
		// (upstream.md §2.1), as in the agent.
		iac = m.Metadata.IacCode
		if len(req.Params.Metadata.IacCode) > 0 {
			iac = req.Params.Metadata.IacCode
		}
		c.MetadataKeys = slices.Sorted(maps.Keys(iac))
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.log = append(rc.log, c)
	if raw, ok := iac["llm_headers"]; ok && c.ContextID != "" {
		var h map[string]any
		if json.Unmarshal(raw, &h) == nil && h != nil {
			bind := map[string]string{}
			for k, v := range h {
				if s, ok := v.(string); ok {
					bind[k] = s
				}
			}
			if len(h) == 0 {
				delete(rc.bound, c.ContextID)
			} else {
				rc.bound[c.ContextID] = bind
			}
		}
	}
}

func (rc *recorder) calls() []Call {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.log)
}

func (rc *recorder) headers(contextID string) map[string]string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if h := rc.bound[contextID]; h != nil {
		return maps.Clone(h)
	}
	return nil
}
