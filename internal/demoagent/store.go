package demoagent

import (
	"container/list"
	"context"
	"encoding/json"
	"sync"
	"time"
)

// frame is one encoded StreamResponse and the task state it leaves behind.
type frame struct {
	err    *rpcError // set for a mid-stream error frame
	result []byte
	state  string
	iac    map[string]any
}

// sub is one open stream reading a task's live frames.
type sub struct {
	ch   chan frame
	done chan struct{} // closed by the reader when its client goes away
	once sync.Once
}

func (s *sub) leave() { s.once.Do(func() { close(s.done) }) }

// ctxRec is one A2A context: its session, workspace and bindings.
type ctxRec struct {
	id          string
	sessionID   string
	cwd         string
	headers     map[string]string // llm_headers binding; memory only
	activeTask  string            // running task id
	waitingTask string            // pipeline task parked on an input
	seq         int               // pipeline journal sequence, per context
	backupOnce  bool              // next ensure-restored answers 409 once
	restoreNext bool              // the call after that 409 answers "restored"
	sidebandErr bool              // next sideband SendMessage fails once
	ntasks      int               // retained tasks of this context
	saved       bool              // its identity is in Options.BackupDir
	backup      *ctxBackup        // what Options.BackupDir holds for it; Agent.bkMu
	idle        *list.Element     // in Agent.idleCtxs while ntasks == 0

	// handoffTask is the pipeline task that last handed the context over
	// to normal chat (pipeline_handoff_ready); cleanupOnly needs one.
	handoffTask string
}

// permWait is a permission the executor is waiting for.
type permWait struct {
	inputID   string
	toolUseID string
	sideband  bool
	decision  chan string
	// replied is closed when the reply stream of a streamed answer has
	// ended, so the continuation can wait for the client to come back.
	replied chan struct{}
}

// textWait is an input answered by a text message, parked after its stream
// ended: a pipeline question, selection or deployment confirmation, or a
// normal-mode cloud resource selection.
type textWait struct {
	kind    string // ask_user_question | candidate_selection | deployment_confirmation | cloud_resource_selection
	inputID string
	spec    *waitSpec // pipeline inputs: what a backup keeps to rebuild resume
	resume  func(ctx context.Context, e *emitter, answer string) error
	// check, when set, refuses a malformed answer with a plain JSON-RPC
	// error before any event, leaving the wait answerable.
	check func(answer string) *rpcError
}

// taskRec is the in-memory task. Fields are guarded by Agent.mu; pubMu
// serialises publication so every subscriber sees the same frame order.
type taskRec struct {
	pubMu     sync.Mutex
	t         taskObj
	ctx       *ctxRec
	pipeline  bool
	active    bool
	cancel    context.CancelFunc
	runDone   chan struct{}
	subs      map[*sub]struct{}
	perm      *permWait            // normal or parent-scope permission
	sideband  map[string]*permWait // candidate-scope permissions by inputId
	pending   []any                // pendingPermissions envelopes
	wait      *textWait
	journal   []map[string]any
	runName   string
	lastPipe  string // pipeline status for the snapshot
	updatedAt time.Time
	idle      *list.Element // in Agent.idleTasks while evictable

	// guidance carries guidance texts to a running pipeline script;
	// guided lists the guidance ids already applied (guidance.go).
	guidance chan string
	guided   []string

	// handover closes when a prepare committed the session of a held
	// "hand over" turn (handover.go).
	handover chan struct{}
}

func (a *Agent) subscribe(t *taskRec) *sub {
	s := &sub{ch: make(chan frame, 64), done: make(chan struct{})}
	t.subs[s] = struct{}{}
	return s
}

func (a *Agent) unsubscribe(t *taskRec, s *sub) {
	s.leave()
	a.mu.Lock()
	delete(t.subs, s)
	a.mu.Unlock()
}

// publish applies a stream result to the stored task and fans it out.
// Sends block until each live reader takes the frame (back-pressure), give
// up for readers that left, and give up when ctx ends.
func (a *Agent) publish(ctx context.Context, t *taskRec, r streamResult) error {
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	return a.publishLocked(ctx, t, r)
}

// publishLocked is publish for a caller that holds t.pubMu.
func (a *Agent) publishLocked(ctx context.Context, t *taskRec, r streamResult) error {
	a.mu.Lock()
	f := frame{state: t.t.Status.State}
	switch {
	case r.StatusUpdate != nil:
		a.applyStatus(t, r.StatusUpdate)
		f.state = r.StatusUpdate.Status.State
		if m, ok := r.StatusUpdate.Metadata["iac_code"].(map[string]any); ok {
			f.iac = m
		}
	case r.ArtifactUpdate != nil:
		t.t.Artifacts = trimTail(append(t.t.Artifacts, r.ArtifactUpdate.Artifact), maxArtifacts)
	case r.Task != nil:
		f.state = r.Task.Status.State
	}
	t.updatedAt = time.Now()
	var bk *taskWrite
	if r.StatusUpdate != nil {
		bk = a.backupTaskLocked(t)
	}
	subs := make([]*sub, 0, len(t.subs))
	for s := range t.subs {
		subs = append(subs, s)
	}
	a.mu.Unlock()
	// Written before anyone sees the frame: a client holding an
	// input-required wait can count on another agent restoring it.
	a.saveBackup(bk)
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f.result = b
	for _, s := range subs {
		select {
		case s.ch <- f:
		case <-s.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// publishError fans out a mid-stream JSON-RPC error and records the task
// as FAILED (no status frame exists for it on the wire).
func (a *Agent) publishError(ctx context.Context, t *taskRec, e *rpcError) error {
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	a.mu.Lock()
	a.applyStatus(t, &statusUpdate{Status: taskStatus{State: stateFailed, Timestamp: now(),
		Message: agentText(t.t.ID, t.t.ContextID, t.t.ID+"-4", "Internal error")}})
	subs := make([]*sub, 0, len(t.subs))
	for s := range t.subs {
		subs = append(subs, s)
	}
	a.mu.Unlock()
	for _, s := range subs {
		select {
		case s.ch <- frame{err: e, state: stateFailed}:
		case <-s.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// applyStatus moves the replaced status message into history and makes the
// update's iac_code the task's, plus the session id and pending
// permissions (upstream.md §5.4). Caller holds a.mu.
func (a *Agent) applyStatus(t *taskRec, u *statusUpdate) {
	if old := t.t.Status.Message; old != nil {
		// Trimmed in chunks; snapshot shows only the newest maxHistory.
		t.t.History = trimTail(append(t.t.History, *old), maxHistory)
	}
	t.t.Status = u.Status
	iac := map[string]any{}
	if m, ok := u.Metadata["iac_code"].(map[string]any); ok {
		for k, v := range m {
			iac[k] = v
		}
	}
	if t.ctx != nil {
		iac["iacCodeSessionId"] = t.ctx.sessionID
	}
	if len(t.pending) > 0 {
		iac["pendingPermissions"] = append([]any(nil), t.pending...)
	}
	t.t.Metadata = map[string]any{"iac_code": iac}
}

// snapshot copies the stored task, keeping the last historyLength entries
// (negative: all).
func (a *Agent) snapshot(t *taskRec, historyLength int) taskObj {
	c := t.t
	c.Artifacts = t.t.Artifacts
	if len(c.Artifacts) > maxArtifacts {
		c.Artifacts = c.Artifacts[len(c.Artifacts)-maxArtifacts:]
	}
	c.Artifacts = append([]artifact(nil), c.Artifacts...)
	h := t.t.History
	if len(h) > maxHistory {
		h = h[len(h)-maxHistory:]
	}
	if historyLength >= 0 && len(h) > historyLength {
		h = h[len(h)-historyLength:]
	}
	c.History = append([]message(nil), h...)
	if t.t.Metadata != nil {
		iac, _ := t.t.Metadata["iac_code"].(map[string]any)
		cp := make(map[string]any, len(iac))
		for k, v := range iac {
			cp[k] = v
		}
		if len(t.pending) > 0 {
			cp["pendingPermissions"] = append([]any(nil), t.pending...)
		} else {
			delete(cp, "pendingPermissions")
		}
		c.Metadata = map[string]any{"iac_code": cp}
	}
	return c
}
