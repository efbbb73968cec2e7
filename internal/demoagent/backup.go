package demoagent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// Shared backup directory (docs/demo-agent.md, "Shared backup
// directory"). iac-code backs its session directory up to
// IAC_CODE_CONFIG_BACKUP_DIR and restores it on demand (upstream.md §5.4,
// §5.5), so pipeline waits survive the A2A process. With
// Options.BackupDir set, the demo agent emulates that with one file per
// session, <BackupDir>/<sessionId>.json: the session identity and, for
// pipeline tasks, what another agent sharing the directory needs to go on
// (status, last metadata, journal, the pending input's continuation).
// It holds no history, no message text, no llm_headers and nothing of a
// normal turn: a normal-mode permission wait dies with its agent, as in
// iac-code.

const (
	backupVersion = 1
	// maxBackupTasks bounds the pipeline tasks kept per session file,
	// newest first; a context has at most one task waiting for input.
	maxBackupTasks = 20
)

// waitSpec is the serialisable form of a parked pipeline input: the
// continuation is rebuilt from it alone (textWaitFor), live or restored.
type waitSpec struct {
	Kind      string         `json:"kind"` // ask_user_question | candidate_selection | deployment_confirmation | permission
	InputID   string         `json:"inputId"`
	ToolUseID string         `json:"toolUseId,omitempty"` // permission
	Rich      bool           `json:"rich,omitempty"`      // candidate_selection offered rich options
	Params    map[string]any `json:"params,omitempty"`    // deployment_confirmation: the stack parameters asked about
	Handover  bool           `json:"handover,omitempty"`  // pipeline_pause_confirmation of the "hand over" pipeline (handover.go)
}

// sessionFile is the content of <BackupDir>/<sessionId>.json.
type sessionFile struct {
	Version   int               `json:"version"`
	ContextID string            `json:"contextId"`
	SessionID string            `json:"sessionId"`
	Cwd       string            `json:"cwd"`
	Sequence  int               `json:"sequence"` // the context's pipeline journal sequence
	UpdatedAt string            `json:"updatedAt"`
	Tasks     []json.RawMessage `json:"tasks"` // taskBackup, oldest first
}

// taskBackup is one pipeline task in a session file.
type taskBackup struct {
	TaskID         string           `json:"taskId"`
	Status         taskStatus       `json:"status"`
	Metadata       map[string]any   `json:"metadata,omitempty"` // the last status update's iac_code
	Journal        []map[string]any `json:"journal"`
	PipelineRunID  string           `json:"pipelineRunId"`
	PipelineStatus string           `json:"pipelineStatus"`
	Wait           *waitSpec        `json:"wait,omitempty"`
}

// ctxBackup is what the session file of a context holds. Agent.bkMu.
type ctxBackup struct {
	seq   int
	ids   []string // oldest first
	tasks map[string]json.RawMessage
}

// taskWrite is one pending write of a task's backup.
type taskWrite struct {
	c   *ctxRec
	id  string          // "" writes the session identity only
	raw json.RawMessage // taskBackup
	seq int
}

// backupTaskLocked encodes the backup of pipeline task t when its status
// is worth keeping: an input-required wait or a terminal state. Nil when
// there is nothing to write. An agent shutting down writes nothing: the
// cancellation of its runs is not the session's (a restarted iac-code
// resumes them). Caller holds a.mu.
func (a *Agent) backupTaskLocked(t *taskRec) *taskWrite {
	st := t.t.Status.State
	if a.opts.BackupDir == "" || !t.pipeline || t.ctx == nil || (st != stateInputRequired && !isTerminal(st)) || a.base.Err() != nil {
		return nil
	}
	b := taskBackup{TaskID: t.t.ID, Status: t.t.Status, Journal: t.journal, PipelineRunID: t.runName, PipelineStatus: t.lastPipe}
	if iac, ok := t.t.Metadata["iac_code"].(map[string]any); ok {
		b.Metadata = make(map[string]any, len(iac))
		for k, v := range iac {
			if k != "pendingPermissions" { // sideband waits are not restored
				b.Metadata[k] = v
			}
		}
	}
	switch {
	case isTerminal(st):
	case t.wait != nil && t.wait.spec != nil:
		b.Wait = t.wait.spec
	case t.perm != nil && !t.perm.sideband:
		b.Wait = &waitSpec{Kind: "permission", InputID: t.perm.inputID, ToolUseID: t.perm.toolUseID}
	}
	raw, err := json.Marshal(b)
	if err != nil {
		a.log.Warn("demo backup encode failed", "task", t.t.ID, "error", err)
		return nil
	}
	return &taskWrite{c: t.ctx, id: t.t.ID, raw: raw, seq: t.ctx.seq}
}

// sessionWriteLocked is the first write of a new context's identity, nil
// when already written or without a backup directory. Caller holds a.mu.
func (a *Agent) sessionWriteLocked(c *ctxRec) *taskWrite {
	if a.opts.BackupDir == "" || c == nil || c.saved {
		return nil
	}
	c.saved = true
	return &taskWrite{c: c, seq: c.seq}
}

// saveBackup merges w into its context's backup and rewrites the session
// file atomically. Failures are logged, never fatal: the live agent goes
// on, as iac-code does with a blocked backup.
func (a *Agent) saveBackup(w *taskWrite) {
	if w == nil {
		return
	}
	a.bkMu.Lock()
	defer a.bkMu.Unlock()
	c := w.c
	b := c.backup
	if b == nil {
		b = &ctxBackup{tasks: map[string]json.RawMessage{}}
		c.backup = b
	}
	b.seq = max(b.seq, w.seq)
	if w.id != "" {
		if _, ok := b.tasks[w.id]; ok {
			for i, id := range b.ids {
				if id == w.id {
					b.ids = append(b.ids[:i:i], b.ids[i+1:]...)
					break
				}
			}
		}
		b.ids = append(b.ids, w.id)
		b.tasks[w.id] = w.raw
		for len(b.ids) > maxBackupTasks {
			delete(b.tasks, b.ids[0])
			b.ids = b.ids[1:]
		}
	}
	f := sessionFile{Version: backupVersion, ContextID: c.id, SessionID: c.sessionID, Cwd: c.cwd, Sequence: b.seq,
		UpdatedAt: time.Now().UTC().Format(time.RFC3339), Tasks: make([]json.RawMessage, 0, len(b.ids))}
	for _, id := range b.ids {
		f.Tasks = append(f.Tasks, b.tasks[id])
	}
	if err := writeAtomic(a.opts.BackupDir, c.sessionID+".json", f); err != nil {
		a.log.Warn("demo backup write failed", "session", c.sessionID, "error", err)
	}
}

// writeAtomic writes v as JSON to dir/name through a temporary file and a
// rename, so a reader sees the old or the new file, never a torn one.
func writeAtomic(dir, name string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+name+"-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// dropBackups removes the files of sessions this agent forgot
// (retention.go) unless another agent wrote them within ContextRetention.
func (a *Agent) dropBackups(sessionIDs []string) {
	a.bkMu.Lock()
	defer a.bkMu.Unlock()
	for _, sid := range sessionIDs {
		p := filepath.Join(a.opts.BackupDir, sid+".json")
		if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) >= a.opts.ContextRetention {
			_ = os.Remove(p)
		}
	}
}
