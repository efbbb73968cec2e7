package demoagent

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
)

// inMessage is the user message of SendMessage / SendStreamingMessage.
type inMessage struct {
	MessageID string         `json:"messageId"`
	ContextID string         `json:"contextId,omitempty"`
	TaskID    string         `json:"taskId,omitempty"`
	Role      string         `json:"role"`
	Parts     []part         `json:"parts"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	reqMeta   map[string]any
}

// iac returns the iac_code metadata: request-level params.metadata when
// non-empty, else message.metadata (not merged, upstream.md §2.1).
func (m *inMessage) iac() map[string]any {
	src := m.Metadata
	if len(m.reqMeta) > 0 {
		src = m.reqMeta
	}
	v, _ := src["iac_code"].(map[string]any)
	return v
}

func (m *inMessage) text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// empty reports a message with no text and no other content part.
func (m *inMessage) empty() bool {
	for _, p := range m.Parts {
		if strings.TrimSpace(p.Text) != "" || len(p.Data) > 0 || p.Raw != "" || p.URL != "" {
			return false
		}
	}
	return true
}

func (m *inMessage) echo() message {
	return message{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: m.Role, Parts: m.Parts, Metadata: m.Metadata}
}

func metaString(iac map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := iac[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// sendReq is one accepted SendMessage call on its way to a task.
type sendReq struct {
	id        json.RawMessage
	streaming bool
	msg       *inMessage
	w         http.ResponseWriter
	r         *http.Request
}

func (q *sendReq) fail(e *rpcError) { writeRaw(q.w, http.StatusOK, rpcErrorBody(q.id, e)) }

func (a *Agent) serveSend(w http.ResponseWriter, r *http.Request, req *rpcRequest) {
	var p struct {
		Message  *inMessage     `json:"message"`
		Metadata map[string]any `json:"metadata"`
	}
	q := &sendReq{id: req.ID, streaming: req.Method == "SendStreamingMessage", w: w, r: r}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Message == nil {
		q.fail(newRPCError(codeParams, "Invalid params"))
		return
	}
	m := p.Message
	m.reqMeta = p.Metadata
	q.msg = m
	switch {
	case m.MessageID == "":
		q.fail(newRPCError(codeParams, "Invalid params: messageId is required"))
		return
	case m.ContextID != "" && !idPattern.MatchString(m.ContextID),
		m.TaskID != "" && !idPattern.MatchString(m.TaskID):
		q.fail(newRPCError(codeParams, "Invalid params: invalid contextId or taskId"))
		return
	}
	if m.ContextID != "" {
		a.restoreContext(m.ContextID)
	}
	if isPermissionReply(m) {
		a.permissionReply(q)
		return
	}
	a.mu.Lock()
	var t *taskRec
	if m.TaskID != "" {
		t = a.tasks[m.TaskID]
		if t == nil {
			a.mu.Unlock()
			q.fail(newRPCError(codeTaskNotFound, "Task not found"))
			return
		}
		if isTerminal(t.t.Status.State) {
			st := t.t.Status.State
			a.mu.Unlock()
			q.fail(newRPCError(codeParams, "Task "+m.TaskID+" is in terminal state: "+itoa(stateNumber[st])))
			return
		}
		if m.ContextID == "" {
			m.ContextID = t.t.ContextID
		} else if m.ContextID != t.t.ContextID {
			a.mu.Unlock()
			q.fail(newRPCError(codeParams, "Task "+m.TaskID+" belongs to another context"))
			return
		}
	}
	if m.ContextID == "" {
		m.ContextID = uuid.NewString()
	}
	c := a.ctxs[m.ContextID]
	if t == nil && c != nil && c.waitingTask != "" {
		t = a.tasks[c.waitingTask] // pipeline answers may omit the task id
		m.TaskID = t.t.ID
	}
	a.mu.Unlock()
	a.route(q, t)
}

// isPermissionReply: a message carrying a permission data part is handled
// as a permission answer (and validated as one).
func isPermissionReply(m *inMessage) bool {
	for _, p := range m.Parts {
		if len(p.Data) == 0 {
			continue
		}
		var d struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(p.Data, &d) == nil && d.Kind == "permission" {
			return true
		}
	}
	return false
}

// route resolves the workspace and context binding, then starts the
// scripted turn or resumes a parked pipeline input.
func (a *Agent) route(q *sendReq, t *taskRec) { a.routeOnce(q, t, true) }

// settleWait bounds how long a message waits for a task that already
// published the end of its turn but whose goroutine has not yet let go of
// the context; iac-code frees the context before it publishes, so a client
// that sends its next turn on RUN_FINISHED must not meet "already working".
const settleWait = 2 * time.Second

// finishingLocked returns the run-done channel of the context's active
// task when that task has already published a turn-ending status; nil
// otherwise. Caller holds a.mu.
func (a *Agent) finishingLocked(c *ctxRec) chan struct{} {
	at := a.tasks[c.activeTask]
	if at == nil || !at.active || at.runDone == nil {
		return nil
	}
	switch at.t.Status.State {
	case stateCompleted, stateFailed, stateCanceled, stateInputRequired:
		return at.runDone
	}
	return nil
}

func (a *Agent) routeOnce(q *sendReq, t *taskRec, mayWait bool) {
	m := q.msg
	iac := m.iac()
	lower := strings.ToLower(m.text())
	sc := pickScenario(lower, metaString(iac, "run_mode", "runMode"))
	if cleanupOnly(iac) {
		sc = scenario{name: "cleanup", refuse: cleanupRefusal(strings.EqualFold(metaString(iac, "run_mode", "runMode"), "pipeline")),
			run: func(_ context.Context, e *emitter) error { return e.cleanupTurn() }}
	}
	if m.empty() {
		if sc.pipeline {
			q.fail(newRPCError(codeParams, "A2A server received empty input."))
			return
		}
		a.runFailed(q, t, "A2A server currently accepts text input only.", false)
		return
	}
	cwd := metaString(iac, "cwd")
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if !filepath.IsAbs(cwd) {
		if sc.pipeline {
			q.fail(newRPCError(codeParams, "Invalid A2A workspace metadata."))
			return
		}
		a.runFailed(q, t, "Invalid A2A workspace metadata.", false)
		return
	}
	a.mu.Lock()
	c := a.ctxs[m.ContextID]
	if c == nil {
		c = &ctxRec{id: m.ContextID, sessionID: sessionFor(m.ContextID), cwd: filepath.Clean(cwd)}
		a.newCtxLocked(c)
	}
	a.touchCtxLocked(c)
	if c.cwd != filepath.Clean(cwd) {
		a.mu.Unlock()
		a.runFailed(q, t, "A2A context belongs to a different workspace", false)
		return
	}
	bindHeaders(c, iac)
	if strings.Contains(lower, "backup not ready") {
		c.backupOnce, c.sidebandErr = true, true
	}
	if t != nil && t.wait != nil && !t.active {
		a.mu.Unlock()
		a.journalInput(m)
		a.resumeInput(q, t)
		return
	}
	if sc.refuse != nil {
		if e := sc.refuse(c); e != nil {
			a.mu.Unlock()
			q.fail(e)
			return
		}
	}
	busy := c.activeTask != ""
	sameActive := t != nil && t.active
	guidance := sameActive && t.pipeline
	var finishing chan struct{}
	if busy && mayWait {
		finishing = a.finishingLocked(c)
	}
	a.mu.Unlock()
	if finishing != nil {
		select {
		case <-finishing:
		case <-time.After(settleWait):
		}
		a.routeOnce(q, t, false)
		return
	}
	if guidance {
		a.guide(q, t)
		return
	}
	if sameActive {
		a.runFailed(q, t, "Task is already working.", true)
		return
	}
	if busy {
		a.runFailed(q, t, "Task is already working.", false)
		return
	}
	a.startTurn(q, t, c, sc)
}

// sessionNS names the iac-code session ids derived from context ids.
var sessionNS = uuid.MustParse("5d3c1f0e-7a52-4c1e-9b8e-2f6a0c4d9e17")

// sessionFor derives a context's iac-code session id from its id, so a
// context evicted while idle comes back with the same session and the
// adapter's identity check still holds (docs/decisions.md).
func sessionFor(contextID string) string {
	return uuid.NewSHA1(sessionNS, []byte(contextID)).String()
}

// bindHeaders applies llm_headers to the context: a map replaces the
// binding, {} clears it, omission inherits. Values stay in memory only.
func bindHeaders(c *ctxRec, iac map[string]any) {
	raw, present := iac["llm_headers"]
	if !present {
		return
	}
	h, ok := raw.(map[string]any)
	if !ok {
		return
	}
	if len(h) == 0 {
		c.headers = nil
		return
	}
	c.headers = make(map[string]string, len(h))
	for k, v := range h {
		if s, ok := v.(string); ok {
			c.headers[k] = s
		}
	}
}
