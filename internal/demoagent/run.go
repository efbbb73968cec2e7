package demoagent

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
)

const (
	retryMsg    = "A temporary error occurred. Please retry."
	canceledMsg = "Task canceled."
)

// script is one scripted executor run; it returns when its request is done.
type script func(ctx context.Context, e *emitter) error

// emitter publishes one run's frames.
type emitter struct {
	a        *Agent
	t        *taskRec
	ctx      context.Context
	tid, cid string
	sid      string
	lang     string
	cwd      string
	lower    string
	pipeline string // pipeline_name of the request
	rich     bool   // candidatePresentation rich / rich-v1
	images   []any  // the image parts of the request, described (handover.go)
	delay    time.Duration
}

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z") }

func (e *emitter) sleep(d time.Duration) error {
	if d <= 0 {
		return e.ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-e.ctx.Done():
		return e.ctx.Err()
	}
}

func (e *emitter) send(r streamResult) error {
	if err := e.a.publish(e.ctx, e.t, r); err != nil {
		return err
	}
	return e.sleep(e.delay)
}

// status publishes a status update; iac (when non-nil) becomes
// metadata.iac_code.
func (e *emitter) status(state string, msg *message, iac map[string]any, stamp bool) error {
	return e.send(e.statusResult(state, msg, iac, stamp))
}

// statusResult builds the status update that status publishes.
func (e *emitter) statusResult(state string, msg *message, iac map[string]any, stamp bool) streamResult {
	u := &statusUpdate{TaskID: e.tid, ContextID: e.cid, Status: taskStatus{State: state, Message: msg}}
	if stamp {
		u.Status.Timestamp = now()
	}
	if iac != nil {
		u.Metadata = map[string]any{"iac_code": iac}
	}
	return streamResult{StatusUpdate: u}
}

// sess returns kv plus the iac-code session id.
func (e *emitter) sess(kv map[string]any) map[string]any {
	if kv == nil {
		kv = map[string]any{}
	}
	kv["iacCodeSessionId"] = e.sid
	return kv
}

func (e *emitter) text(s string) error {
	return e.status(stateWorking, agentText(e.tid, e.cid, e.tid+"-message", s), e.sess(nil), false)
}

// stateMsg is an executor status text with id "<T>-<state number>".
func (e *emitter) stateMsg(state, text string) *message {
	return agentText(e.tid, e.cid, e.tid+"-"+itoa(stateNumber[state]), text)
}

func (a *Agent) newTask(m *inMessage, c *ctxRec) *taskRec {
	t := &taskRec{ctx: c, subs: map[*sub]struct{}{}, sideband: map[string]*permWait{}, updatedAt: time.Now()}
	t.t = taskObj{ID: uuid.NewString(), ContextID: m.ContextID, Status: taskStatus{State: stateSubmitted}}
	m.TaskID = t.t.ID
	t.t.History = []message{m.echo()}
	a.attachLocked(t)
	a.sweepLocked(time.Now())
	return t
}

// startTurn creates or reuses the task, subscribes the caller and runs sc.
func (a *Agent) startTurn(q *sendReq, t *taskRec, c *ctxRec, sc scenario) {
	a.mu.Lock()
	fresh := t == nil
	if fresh {
		t = a.newTask(q.msg, c)
	} else {
		t.t.History = append(t.t.History, q.msg.echo())
	}
	t.pipeline = sc.pipeline
	bk := a.sessionWriteLocked(c)
	s := a.subscribe(t)
	e := a.emitterFor(q.msg, t)
	a.startRunLocked(t, true, func(ctx context.Context, e2 *emitter) error {
		if fresh {
			snap := a.initialTask(t)
			if err := e2.send(streamResult{Task: &snap}); err != nil {
				return err
			}
		}
		return sc.run(ctx, e2)
	}, e)
	a.mu.Unlock()
	a.saveBackup(bk)
	a.respond(q, t, s)
}

func (a *Agent) initialTask(t *taskRec) taskObj {
	a.mu.Lock()
	defer a.mu.Unlock()
	return taskObj{ID: t.t.ID, ContextID: t.t.ContextID, Status: taskStatus{State: stateSubmitted}, History: append([]message(nil), t.t.History...)}
}

func (a *Agent) emitterFor(m *inMessage, t *taskRec) *emitter {
	e := &emitter{a: a, t: t, tid: t.t.ID, cid: t.t.ContextID, delay: a.opts.StepDelay,
		lang: normLang(metaString(m.iac(), "preferredLanguage", "preferred_language")), lower: strings.ToLower(m.text()),
		pipeline: metaString(m.iac(), "pipeline_name", "pipelineName"), images: imageDescriptors(m.Parts)}
	switch strings.ToLower(metaString(m.iac(), "candidatePresentation", "candidate_presentation")) {
	case "rich", "rich-v1":
		e.rich = true
	}
	if t.ctx != nil {
		e.sid, e.cwd = t.ctx.sessionID, t.ctx.cwd
	}
	return e
}

// startRunLocked starts sc in its own goroutine; claim marks the context
// busy while it runs. Caller holds a.mu.
func (a *Agent) startRunLocked(t *taskRec, claim bool, sc script, e *emitter) {
	ctx, cancel := context.WithCancel(a.base)
	e.ctx = ctx
	a.busyLocked(t)
	a.attachLocked(t)
	t.active, t.cancel, t.runDone = true, cancel, make(chan struct{})
	if claim && t.ctx != nil {
		t.ctx.activeTask = t.t.ID
	}
	done := t.runDone
	a.runsWG.Add(1)
	go func() {
		defer a.runsWG.Done()
		defer cancel()
		err := sc(ctx, e)
		if ctx.Err() != nil {
			a.finishCanceled(t, e)
		} else if err != nil {
			a.log.Warn("demo run failed", "task", t.t.ID, "error", err)
		}
		t.pubMu.Lock()
		a.mu.Lock()
		t.active, t.perm, t.cancel = false, nil, nil
		if t.ctx != nil && t.ctx.activeTask == t.t.ID {
			t.ctx.activeTask = ""
		}
		for s := range t.subs {
			close(s.ch)
			delete(t.subs, s)
		}
		close(done)
		a.idleLocked(t)
		a.mu.Unlock()
		t.pubMu.Unlock()
	}()
}

// finishCanceled publishes the CANCELED status after a cancel (a pipeline
// task first gets its pipeline_canceled envelope).
func (a *Agent) finishCanceled(t *taskRec, e *emitter) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fe := *e
	fe.ctx, fe.delay = ctx, 0
	a.mu.Lock()
	t.pending, t.sideband, t.wait = nil, map[string]*permWait{}, nil
	if t.ctx != nil && t.ctx.waitingTask == t.t.ID {
		t.ctx.waitingTask = ""
	}
	pipe := t.pipeline
	a.mu.Unlock()
	if pipe {
		env := fe.envelope("pipeline_canceled", "pipeline", "canceled", map[string]any{"source": "executor", "reason": canceledMsg}, nil)
		_ = fe.status(stateCanceled, nil, fe.pipeIAC(env), true)
		return
	}
	_ = fe.status(stateCanceled, fe.stateMsg(stateCanceled, canceledMsg), fe.sess(nil), true)
}

// cancelParked cancels an inactive task parked on a pipeline input or a
// retryable error (upstream.md §5.1).
func (a *Agent) cancelParked(t *taskRec) {
	a.mu.Lock()
	e := &emitter{a: a, t: t, tid: t.t.ID, cid: t.t.ContextID}
	if t.ctx != nil {
		e.sid, e.cwd = t.ctx.sessionID, t.ctx.cwd
	}
	a.mu.Unlock()
	a.finishCanceled(t, e)
	a.mu.Lock()
	a.idleLocked(t)
	a.mu.Unlock()
}

// runFailed answers with a FAILED status (upstream.md §6.2). With
// ephemeral the stored task is left alone: it is the running task itself.
func (a *Agent) runFailed(q *sendReq, t *taskRec, text string, ephemeral bool) {
	if ephemeral {
		u := statusUpdate{TaskID: t.t.ID, ContextID: t.t.ContextID, Status: taskStatus{State: stateFailed,
			Message: agentText(t.t.ID, t.t.ContextID, t.t.ID+"-4", text), Timestamp: now()}}
		if q.streaming {
			sw := startSSE(q.w)
			_ = sw.data(rpcResponse(q.id, streamResult{StatusUpdate: &u}))
			return
		}
		a.mu.Lock()
		snap := a.snapshot(t, 0)
		a.mu.Unlock()
		snap.Status = u.Status
		writeRaw(q.w, http.StatusOK, rpcResponse(q.id, streamResult{Task: &snap}))
		return
	}
	a.mu.Lock()
	fresh := t == nil
	if fresh {
		t = a.newTask(q.msg, nil)
	}
	s := a.subscribe(t)
	e := a.emitterFor(q.msg, t)
	e.sid = ""
	a.startRunLocked(t, false, func(ctx context.Context, e2 *emitter) error {
		if fresh {
			snap := a.initialTask(t)
			if err := e2.send(streamResult{Task: &snap}); err != nil {
				return err
			}
		}
		return e2.status(stateFailed, e2.stateMsg(stateFailed, text), nil, true)
	}, e)
	a.mu.Unlock()
	a.respond(q, t, s)
}

// respond streams the run's frames to the caller, or, for SendMessage,
// waits for input-required/terminal and answers with the task.
func (a *Agent) respond(q *sendReq, t *taskRec, s *sub) {
	defer a.unsubscribe(t, s)
	if q.streaming {
		sw := startSSE(q.w)
		a.pump(q.r, sw, q.id, s, false)
		return
	}
	for f := range s.ch {
		if f.err != nil {
			writeRaw(q.w, http.StatusOK, rpcErrorBody(q.id, f.err))
			return
		}
		if stopsStream(f.state) {
			break
		}
	}
	a.mu.Lock()
	snap := a.snapshot(t, -1)
	a.mu.Unlock()
	writeRaw(q.w, http.StatusOK, rpcResponse(q.id, streamResult{Task: &snap}))
}
