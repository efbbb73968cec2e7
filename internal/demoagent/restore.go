package demoagent

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Restoring a session from the shared backup directory (backup.go):
// ensure-restored, or a message naming a context this agent does not
// know, brings the session back with its pipeline tasks under their own
// ids; a parked input answers as it would have on the agent that wrote it.

// textWaitFor rebuilds the continuation of a parked pipeline input; nil for
// a kind that is not answered by text.
func textWaitFor(s waitSpec) *textWait {
	w := &textWait{kind: s.Kind, inputID: s.InputID, spec: &s}
	switch s.Kind {
	case "ask_user_question":
		w.resume = func(_ context.Context, e *emitter, ans string) error { return e.questionAnswered(ans) }
	case "candidate_selection":
		w.resume = func(_ context.Context, e *emitter, ans string) error { return e.selectionAnswered(s.Rich, ans) }
	case "deployment_confirmation":
		w.resume = func(_ context.Context, e *emitter, ans string) error { return e.deployAnswered(s.Params, ans) }
	case "pipeline_pause_confirmation":
		w.resume = func(_ context.Context, e *emitter, ans string) error { return e.pauseAnswered(ans, s.Handover) }
	case "backup_blocked":
		w.resume = func(_ context.Context, e *emitter, _ string) error { return e.backupRetried() }
	default:
		return nil
	}
	return w
}

// canonicalSession accepts only a session id as this agent derives them (a
// canonical UUID): it names a file.
func canonicalSession(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}

// readBackup loads the session file of sessionID; nil when there is none
// or it is unusable (logged).
func (a *Agent) readBackup(sessionID string) *sessionFile {
	if a.opts.BackupDir == "" || !canonicalSession(sessionID) {
		return nil
	}
	a.bkMu.Lock()
	raw, err := os.ReadFile(filepath.Join(a.opts.BackupDir, sessionID+".json"))
	a.bkMu.Unlock()
	if err != nil {
		if !os.IsNotExist(err) {
			a.log.Warn("demo backup read failed", "session", sessionID, "error", err)
		}
		return nil
	}
	var f sessionFile
	if err := json.Unmarshal(raw, &f); err != nil || f.Version != backupVersion || f.SessionID != sessionID ||
		!idPattern.MatchString(f.ContextID) || sessionFor(f.ContextID) != sessionID || !filepath.IsAbs(f.Cwd) {
		a.log.Warn("demo backup unusable", "session", sessionID)
		return nil
	}
	return &f
}

// restoreContext brings back a context named by a message when this agent
// does not know it but the backup does (upstream.md §5.4: the executor
// restores the session before routing a message).
func (a *Agent) restoreContext(contextID string) {
	if a.opts.BackupDir == "" {
		return
	}
	a.mu.Lock()
	known := a.ctxs[contextID] != nil
	a.mu.Unlock()
	if known {
		return
	}
	f := a.readBackup(sessionFor(contextID))
	if f == nil {
		return
	}
	a.mu.Lock()
	if a.ctxs[contextID] == nil {
		a.restoreLocked(f)
	}
	a.mu.Unlock()
}

// restoreLocked installs the context and pipeline tasks of f. Caller holds
// a.mu and has checked that the context is not in memory.
func (a *Agent) restoreLocked(f *sessionFile) *ctxRec {
	c := &ctxRec{id: f.ContextID, sessionID: f.SessionID, cwd: f.Cwd, seq: f.Sequence, saved: true}
	a.newCtxLocked(c)
	bk := &ctxBackup{seq: f.Sequence, tasks: map[string]json.RawMessage{}}
	for _, raw := range f.Tasks {
		var tb taskBackup
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&tb) != nil || !idPattern.MatchString(tb.TaskID) || bk.tasks[tb.TaskID] != nil {
			continue
		}
		bk.ids = append(bk.ids, tb.TaskID)
		bk.tasks[tb.TaskID] = raw
		if a.tasks[tb.TaskID] == nil {
			a.restoreTaskLocked(c, &tb)
		}
	}
	a.bkMu.Lock()
	c.backup = bk
	a.bkMu.Unlock()
	a.log.Info("demo session restored from backup", "context", c.id, "session", c.sessionID, "tasks", len(bk.ids))
	return c
}

// restoreTaskLocked recreates one pipeline task: idle when finished, parked
// on its text input, or running and holding its parent-scope permission
// wait, as on the agent that wrote it. Caller holds a.mu.
func (a *Agent) restoreTaskLocked(c *ctxRec, tb *taskBackup) {
	t := &taskRec{ctx: c, subs: map[*sub]struct{}{}, sideband: map[string]*permWait{}, updatedAt: time.Now(),
		pipeline: true, runName: tb.PipelineRunID, lastPipe: tb.PipelineStatus}
	for _, env := range tb.Journal {
		t.journal = append(t.journal, numbers(env).(map[string]any))
	}
	t.t = taskObj{ID: tb.TaskID, ContextID: c.id, Status: tb.Status}
	if tb.Metadata != nil {
		t.t.Metadata = map[string]any{"iac_code": numbers(tb.Metadata)}
	}
	a.attachLocked(t)
	var spec *waitSpec
	if !isTerminal(tb.Status.State) && tb.Wait != nil {
		spec = tb.Wait
		spec.Params, _ = numbers(spec.Params).(map[string]any)
	}
	switch {
	case spec == nil:
		a.idleLocked(t)
	case spec.Kind == "permission":
		w := &permWait{inputID: spec.InputID, toolUseID: spec.ToolUseID, decision: make(chan string, 1)}
		t.perm = w
		e := &emitter{a: a, t: t, tid: t.t.ID, cid: c.id, sid: c.sessionID, cwd: c.cwd, delay: a.opts.StepDelay}
		if len(t.journal) > 0 {
			e.pipeline, _ = t.journal[0]["pipelineName"].(string)
		}
		a.startRunLocked(t, true, func(_ context.Context, e2 *emitter) error {
			return e2.afterPermission(w, parentPermissionStep(), false)
		}, e)
	default:
		if w := textWaitFor(*spec); w != nil {
			t.wait = w
			c.waitingTask = t.t.ID
		} else {
			a.idleLocked(t)
		}
	}
}

// numbers rebuilds the Go types of decoded JSON numbers so they encode
// as before: "3" was an int (pipelineSnapshot relies on journal ints) or an
// integral float64, "3.0" a protobuf double (num), anything else a float64.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		return restoreNumber(x)
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
		return x
	}
	return v
}

func restoreNumber(n json.Number) any {
	if i, err := n.Int64(); err == nil && !strings.ContainsAny(n.String(), ".eE") {
		return int(i)
	}
	f, _ := n.Float64()
	if f == math.Trunc(f) && strings.Contains(n.String(), ".") && !strings.ContainsAny(n.String(), "eE") {
		return num(f)
	}
	return f
}
