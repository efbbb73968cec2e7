package demoagent

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// methods10 are the A2A 1.0 method names this agent serves.
var methods10 = map[string]bool{
	"SendMessage": true, "SendStreamingMessage": true, "GetTask": true,
	"CancelTask": true, "SubscribeToTask": true, "ListTasks": true,
}

func (a *Agent) serveRPC(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		writeRaw(w, http.StatusOK, rpcErrorBody(nil, newRPCError(codeParse, "Parse error")))
		return
	}
	if len(body) > maxBody {
		writeRaw(w, http.StatusOK, rpcErrorBody(nil, newRPCError(codeInvalidRequest, "Payload too large")))
		return
	}
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil {
		code := codeParse
		if strings.HasPrefix(strings.TrimSpace(string(body)), "[") {
			code = codeInvalidRequest // batches are not supported
		}
		writeRaw(w, http.StatusOK, rpcErrorBody(nil, newRPCError(code, map[int]string{codeParse: "Parse error", codeInvalidRequest: "Invalid Request"}[code])))
		return
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		writeRaw(w, http.StatusOK, rpcErrorBody(req.ID, newRPCError(codeInvalidRequest, "Invalid Request")))
		return
	}
	if !methods10[req.Method] {
		writeRaw(w, http.StatusOK, rpcErrorBody(req.ID, newRPCError(codeMethod, "Method not found")))
		return
	}
	if v := strings.TrimSpace(r.Header.Get("A2A-Version")); v != "1.0" {
		if v == "" {
			v = "0.3" // a missing header means 0.3, as in the A2A Python SDK
		}
		writeRaw(w, http.StatusOK, rpcErrorBody(req.ID, newRPCError(codeVersion, "A2A version "+v+" is not supported")))
		return
	}
	a.log.Debug("a2a call", "method", req.Method)
	if r2, span := a.traceMethod(r, req.Method); span != nil {
		defer span.End()
		r = r2
	}
	switch req.Method {
	case "SendMessage", "SendStreamingMessage":
		a.serveSend(w, r, &req)
	case "GetTask":
		a.serveGetTask(w, &req)
	case "CancelTask":
		a.serveCancel(w, &req)
	case "SubscribeToTask":
		a.serveSubscribe(w, r, &req)
	case "ListTasks":
		a.serveList(w, &req)
	}
}

type taskIDParams struct {
	ID            string `json:"id"`
	HistoryLength *int   `json:"historyLength,omitempty"`
}

func (a *Agent) taskParams(w http.ResponseWriter, req *rpcRequest) (*taskRec, *taskIDParams, bool) {
	var p taskIDParams
	if err := json.Unmarshal(req.Params, &p); err != nil || p.ID == "" {
		writeRaw(w, http.StatusOK, rpcErrorBody(req.ID, newRPCError(codeParams, "Invalid params")))
		return nil, nil, false
	}
	a.mu.Lock()
	t := a.tasks[p.ID]
	a.mu.Unlock()
	if t == nil {
		writeRaw(w, http.StatusOK, rpcErrorBody(req.ID, newRPCError(codeTaskNotFound, "Task not found")))
		return nil, nil, false
	}
	return t, &p, true
}

func (a *Agent) serveGetTask(w http.ResponseWriter, req *rpcRequest) {
	t, p, ok := a.taskParams(w, req)
	if !ok {
		return
	}
	hl := -1
	if p.HistoryLength != nil {
		if *p.HistoryLength < 0 {
			writeRaw(w, http.StatusOK, rpcErrorBody(req.ID, newRPCError(codeParams, "historyLength must be non-negative")))
			return
		}
		hl = *p.HistoryLength
	}
	a.mu.Lock()
	snap := a.snapshot(t, hl)
	a.mu.Unlock()
	writeRaw(w, http.StatusOK, rpcResponse(req.ID, snap))
}

func (a *Agent) serveList(w http.ResponseWriter, req *rpcRequest) {
	var p struct {
		ContextID string `json:"contextId"`
	}
	_ = json.Unmarshal(req.Params, &p)
	a.mu.Lock()
	out := []taskObj{}
	for _, t := range a.tasks {
		if p.ContextID == "" || t.t.ContextID == p.ContextID {
			s := a.snapshot(t, 0)
			s.History = nil
			out = append(out, s)
		}
	}
	a.mu.Unlock()
	writeRaw(w, http.StatusOK, rpcResponse(req.ID, map[string]any{
		"tasks": out, "nextPageToken": "", "pageSize": 50, "totalSize": len(out)}))
}

// serveCancel follows upstream.md §5.1.
func (a *Agent) serveCancel(w http.ResponseWriter, req *rpcRequest) {
	t, _, ok := a.taskParams(w, req)
	if !ok {
		return
	}
	a.mu.Lock()
	active, cancel, done := t.active, t.cancel, t.runDone
	state := t.t.Status.State
	parked := t.wait != nil || (state == stateInputRequired && statusText(t) == retryMsg)
	a.mu.Unlock()
	switch {
	case active:
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
	case parked && !isTerminal(state):
		a.cancelParked(t)
	default:
		writeRaw(w, http.StatusOK, rpcErrorBody(req.ID, newRPCError(codeNotCancelable, "Task cannot be canceled")))
		return
	}
	a.mu.Lock()
	snap := a.snapshot(t, -1)
	a.mu.Unlock()
	writeRaw(w, http.StatusOK, rpcResponse(req.ID, snap))
}

func statusText(t *taskRec) string {
	if t.t.Status.Message == nil || len(t.t.Status.Message.Parts) == 0 {
		return ""
	}
	return t.t.Status.Message.Parts[0].Text
}

// serveSubscribe follows upstream.md §5.2: the current task first, then
// live frames, ending at the first input-required or terminal state.
func (a *Agent) serveSubscribe(w http.ResponseWriter, r *http.Request, req *rpcRequest) {
	t, _, ok := a.taskParams(w, req)
	if !ok {
		return
	}
	t.pubMu.Lock()
	a.mu.Lock()
	if !t.active {
		a.mu.Unlock()
		t.pubMu.Unlock()
		writeRaw(w, http.StatusOK, rpcErrorBody(req.ID, newRPCError(codeTaskNotFound, "Task "+t.t.ID+" is not active")))
		return
	}
	s := a.subscribe(t)
	snap := a.snapshot(t, -1)
	a.mu.Unlock()
	t.pubMu.Unlock()
	defer a.unsubscribe(t, s)
	first, _ := json.Marshal(streamResult{Task: &snap})
	sw := startSSE(w)
	if err := sw.data(rpcFrame(req.ID, first)); err != nil || stopsStream(snap.Status.State) {
		return
	}
	a.pump(r, sw, req.ID, s, true)
}

// pump copies live frames to one SSE stream until the channel closes, the
// client leaves, or (stopAtInput) a frame reaches input-required/terminal.
func (a *Agent) pump(r *http.Request, sw *sseWriter, id json.RawMessage, s *sub, stopAtInput bool) {
	var tick <-chan time.Time
	if a.opts.PingInterval > 0 {
		tk := time.NewTicker(a.opts.PingInterval)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		select {
		case f, ok := <-s.ch:
			if !ok {
				_ = sw.flush()
				return
			}
			if f.err != nil {
				_ = sw.errorFrame(rpcErrorBody(id, f.err))
				return
			}
			if err := sw.write(rpcFrame(id, f.result)); err != nil {
				return
			}
			if stopAtInput && stopsStream(f.state) {
				_ = sw.flush()
				return
			}
			if len(s.ch) == 0 {
				if err := sw.flush(); err != nil {
					return
				}
			}
		case <-tick:
			if err := sw.ping(); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
