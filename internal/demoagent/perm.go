package demoagent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
)

const (
	errPermPart     = "Permission responses must contain exactly one application/json DataPart."
	errPermFields   = "Permission response payload fields do not match schemaVersion 1."
	errPermDecision = "Permission decision must be allow_once or deny."
	errPermTask     = "Permission response taskId does not match requestTaskId."
	errPermRole     = "Permission responses must use ROLE_USER."
	errPermStale    = "permission_resume_invalid: pending permission is not active."
	errPermMismatch = "input_response_mismatch: permission correlation does not match."
)

var permKeys = []string{"decision", "inputId", "kind", "requestTaskId", "schemaVersion", "toolUseId"}

type permReply struct {
	SchemaVersion json.Number `json:"schemaVersion"`
	Kind          string      `json:"kind"`
	RequestTaskID string      `json:"requestTaskId"`
	InputID       string      `json:"inputId"`
	ToolUseID     string      `json:"toolUseId"`
	Decision      string      `json:"decision"`
}

// validatePermission applies upstream.md §4.2 to the message shape.
func validatePermission(m *inMessage) (*permReply, string) {
	if len(m.Parts) != 1 || len(m.Parts[0].Data) == 0 || m.Parts[0].MediaType != "application/json" {
		return nil, errPermPart
	}
	if m.Role != "ROLE_USER" {
		return nil, errPermRole
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(m.Parts[0].Data, &raw) != nil {
		return nil, errPermPart
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != strings.Join(permKeys, ",") {
		return nil, errPermFields
	}
	var p permReply
	dec := json.NewDecoder(bytes.NewReader(m.Parts[0].Data))
	dec.UseNumber()
	if dec.Decode(&p) != nil || p.SchemaVersion.String() != "1" || p.InputID == "" || p.ToolUseID == "" {
		return nil, errPermFields
	}
	if p.Decision != "allow_once" && p.Decision != "deny" {
		return nil, errPermDecision
	}
	if m.TaskID == "" || m.ContextID == "" || m.TaskID != p.RequestTaskID {
		return nil, errPermTask
	}
	return &p, ""
}

// permissionReply routes a validated answer: sideband (candidate scope)
// gets a permission_ack message; otherwise the waiting executor resumes and
// the reply stream carries its inputReceived frame, then ends.
func (a *Agent) permissionReply(q *sendReq) {
	m := q.msg
	p, msg := validatePermission(m)
	if msg != "" {
		q.fail(newRPCError(codeParams, msg))
		return
	}
	a.mu.Lock()
	t := a.tasks[m.TaskID]
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
	if m.ContextID != t.t.ContextID {
		a.mu.Unlock()
		q.fail(newRPCError(codeParams, errPermMismatch))
		return
	}
	if w := t.sideband[p.InputID]; w != nil {
		if w.toolUseID != p.ToolUseID {
			a.mu.Unlock()
			q.fail(newRPCError(codeParams, errPermMismatch))
			return
		}
		if t.ctx != nil && t.ctx.sidebandErr {
			t.ctx.sidebandErr = false
			a.mu.Unlock()
			q.fail(passthroughError(codeInternal, "Session backup is not ready.",
				map[string]any{"code": "SESSION_BACKUP_NOT_READY", "retryable": true}))
			return
		}
		delete(t.sideband, p.InputID)
		w.decision <- p.Decision
		a.mu.Unlock()
		a.sidebandAck(q, t, p)
		return
	}
	w := t.perm
	if w == nil || !t.active || w.inputID != p.InputID {
		a.mu.Unlock()
		q.fail(newRPCError(codeParams, errPermStale))
		return
	}
	if w.toolUseID != p.ToolUseID {
		a.mu.Unlock()
		q.fail(newRPCError(codeParams, errPermMismatch))
		return
	}
	t.perm = nil
	s := a.subscribe(t)
	w.replied = make(chan struct{})
	w.decision <- p.Decision
	a.mu.Unlock()
	defer close(w.replied)
	a.followReply(q, t, s, p.InputID)
}

// followReply forwards frames until the executor acknowledges inputID.
func (a *Agent) followReply(q *sendReq, t *taskRec, s *sub, inputID string) {
	defer a.unsubscribe(t, s)
	var sw *sseWriter
	if q.streaming {
		sw = startSSE(q.w)
	}
	for f := range s.ch {
		if sw != nil {
			if err := sw.data(rpcFrame(q.id, f.result)); err != nil {
				return
			}
		}
		ir, _ := f.iac["inputReceived"].(map[string]any)
		if ir != nil && ir["inputId"] == inputID || isTerminal(f.state) {
			break
		}
	}
	if sw == nil {
		a.mu.Lock()
		snap := a.snapshot(t, -1)
		a.mu.Unlock()
		writeRaw(q.w, http.StatusOK, rpcResponse(q.id, streamResult{Task: &snap}))
	}
}

func (a *Agent) sidebandAck(q *sendReq, t *taskRec, p *permReply) {
	data, _ := json.Marshal(map[string]any{"schemaVersion": 1, "kind": "permission_ack", "inputId": p.InputID,
		"toolUseId": p.ToolUseID, "decision": p.Decision, "accepted": true})
	ack := &message{MessageID: "permission-ack-" + hex32(), ContextID: t.t.ContextID, TaskID: t.t.ID, Role: "ROLE_AGENT",
		Parts: []part{{Data: data, MediaType: "application/json"}}}
	if q.streaming {
		sw := startSSE(q.w)
		_ = sw.data(rpcResponse(q.id, streamResult{Message: ack}))
		return
	}
	writeRaw(q.w, http.StatusOK, rpcResponse(q.id, streamResult{Message: ack}))
}

func hex32() string { return strings.ReplaceAll(uuid.NewString(), "-", "") }

// permissionEnvelope is the §4.1 projection for a bash command.
func (e *emitter) permissionEnvelope(inputID, toolUseID string) map[string]any {
	tx := permissionText(e.lang)
	return map[string]any{
		"schemaVersion": num(1), "kind": "permission", "requestTaskId": e.tid, "contextId": e.cid,
		"inputId": inputID, "toolUseId": toolUseID, "toolName": "bash",
		"title": tx.title, "purpose": tx.purpose, "effect": "local_execution",
		"target": "the current local workspace; command: pwd", "isReadOnly": false,
		"prompt": tx.prompt, "safeSummary": `bash: {"command":"pwd"}`,
		"options":  []any{map[string]any{"id": "allow_once", "label": tx.allow}, map[string]any{"id": "deny", "label": tx.deny}},
		"language": e.lang, "required": true,
	}
}

// watcherWait bounds how long a continuation waits for a client to watch
// the task again after a streamed permission answer.
const watcherWait = 2 * time.Second

// awaitWatcher lets a client that answered on its own reply stream come
// back (SubscribeToTask) before the rest of the turn is published. A2A does
// not replay missed frames (upstream.md §5.2); a real tool takes this
// long anyway, and waiting makes the scripted continuation deterministic.
// With no watcher the turn goes on after watcherWait.
func (e *emitter) awaitWatcher(w *permWait) error {
	if w.replied == nil {
		return nil
	}
	select {
	case <-w.replied:
	case <-e.ctx.Done():
		return e.ctx.Err()
	}
	deadline := time.Now().Add(watcherWait)
	for time.Now().Before(deadline) {
		e.a.mu.Lock()
		n := len(e.t.subs)
		e.a.mu.Unlock()
		if n > 0 {
			return nil
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-e.ctx.Done():
			return e.ctx.Err()
		}
	}
	return nil
}

// awaitDecision registers a wait and blocks until it is answered or the
// run is cancelled.
func (e *emitter) awaitDecision(w *permWait) (string, error) {
	select {
	case d := <-w.decision:
		return d, nil
	case <-e.ctx.Done():
		return "", e.ctx.Err()
	}
}

// permissionTurn asks to run `pwd` and keeps the stream open for the answer.
func (e *emitter) permissionTurn() error {
	if err := e.begin(); err != nil {
		return err
	}
	const tu = "toolu_demo_bash"
	if err := e.text("I need to inspect the workspace first."); err != nil {
		return err
	}
	if err := e.tool(map[string]any{"status": "started", "toolUseId": tu, "name": "bash"}); err != nil {
		return err
	}
	if err := e.tool(map[string]any{"status": "input_complete", "toolUseId": tu, "name": "bash",
		"inputSummary": map[string]any{"tool_name": "bash", "fields": map[string]any{"command": "string"}}}); err != nil {
		return err
	}
	w := &permWait{inputID: "permission-" + hex32(), toolUseID: tu, decision: make(chan string, 1)}
	e.a.mu.Lock()
	e.t.perm = w
	e.a.mu.Unlock()
	env := e.permissionEnvelope(w.inputID, tu)
	if err := e.status(stateInputRequired, nil, e.sess(map[string]any{"input": env, "permission": map[string]any{
		"autoApproved": false, "pending": true, "toolName": "bash", "toolUseId": tu}}), true); err != nil {
		return err
	}
	d, err := e.awaitDecision(w)
	if err != nil {
		return err
	}
	if err := e.status(stateWorking, nil, map[string]any{"inputReceived": map[string]any{
		"kind": "permission", "inputId": w.inputID, "toolUseId": tu, "decision": d}}, true); err != nil {
		return err
	}
	if err := e.awaitWatcher(w); err != nil {
		return err
	}
	reply := trf(e.lang, msgPermWorkspace, e.cwd)
	res := map[string]any{"status": "completed", "toolUseId": tu, "name": "bash", "result": e.cwd + "\n"}
	if d == "deny" {
		reply = tr(e.lang, msgPermDenied)
		res = map[string]any{"status": "failed", "toolUseId": tu, "name": "bash", "result": "Permission denied by user."}
	}
	if err := e.tool(res); err != nil {
		return err
	}
	if err := e.text(reply); err != nil {
		return err
	}
	if err := e.usage(900, 120); err != nil {
		return err
	}
	return e.finish(reply)
}
