package demoagent

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

var afterPattern = regexp.MustCompile(`^[0-9]{1,20}$`)

// parseAfter reads afterSequence: a non-negative decimal of at most 20
// digits. Values past uint64 cannot be exceeded by any sequence.
func parseAfter(v string, present bool) (uint64, bool, bool) {
	if !present {
		return 0, false, true
	}
	if !afterPattern.MatchString(v) {
		return 0, true, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		n = ^uint64(0)
	}
	return n, true, true
}

// pipelineSnapshot is a reduced schema-1.1 recovery snapshot built from
// the task's journal. Caller holds a.mu.
func (a *Agent) pipelineSnapshot(t *taskRec) map[string]any {
	last := 0
	seen := []any{}
	steps := []any{}
	byStep := map[string]map[string]any{}
	var pending any
	for _, env := range t.journal {
		if s := env["sequence"].(int); s > last {
			last = s
		}
		seen = append(seen, env["eventId"])
		step, _ := env["step"].(map[string]any)
		switch env["eventType"] {
		case "step_started":
			st := map[string]any{"runId": step["runId"], "id": step["id"], "attempt": step["attempt"], "status": "working",
				"index": step["index"], "total": step["total"], "type": "normal", "startedAt": env["createdAt"], "candidates": []any{}}
			byStep[step["runId"].(string)] = st
			steps = append(steps, st)
		case "step_completed":
			if st := byStep[step["runId"].(string)]; st != nil {
				st["status"], st["completedAt"] = "completed", env["createdAt"]
			}
		case "input_required", "permission_requested":
			pending = map[string]any{"input": env["input"], "scope": env["scope"], "eventId": env["eventId"], "createdAt": env["createdAt"]}
		case "input_received", "permission_resolved":
			pending = nil
		}
	}
	status := t.lastPipe
	if status == "input_required" {
		status = "waiting_input"
	}
	return map[string]any{
		"schemaVersion": "1.1", "snapshotVersion": 1, "pipelineRunId": t.runName, "taskId": t.t.ID,
		"contextId": t.t.ContextID, "pipelineName": t.journal[0]["pipelineName"], "status": status,
		"lastSequence": last, "generatedAt": time.Now().UTC().Format(time.RFC3339), "steps": steps,
		"display":      map[string]any{"messages": []any{}, "diagrams": []any{}, "candidateDetails": []any{}, "artifacts": []any{}, "permissions": []any{}, "toolResults": []any{}},
		"pendingInput": pending, "seenEventIds": seen,
	}
}

// serveEnsureRestored answers POST /iac-code/session/ensure-restored
// (upstream.md §5.5): "current" for a session in memory (or 409
// SESSION_BACKUP_NOT_READY once after a "backup not ready" turn, then
// "restored"); "restored" for one brought back from Options.BackupDir
// (backup.go); 404 when neither has it or the cwd differs.
func (a *Agent) serveEnsureRestored(w http.ResponseWriter, r *http.Request) {
	var p struct {
		Cwd       string `json:"cwd"`
		SessionID string `json:"sessionId"`
		TaskID    string `json:"taskId"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if json.Unmarshal(body, &p) != nil || p.SessionID == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "sessionId is required"})
		return
	}
	a.mu.Lock()
	c := a.sessionLocked(p.SessionID)
	restored := false
	if c == nil && a.opts.BackupDir != "" {
		a.mu.Unlock()
		f := a.readBackup(p.SessionID)
		a.mu.Lock()
		if c = a.sessionLocked(p.SessionID); c == nil && f != nil && (p.Cwd == "" || p.Cwd == f.Cwd) && a.ctxs[f.ContextID] == nil {
			c, restored = a.restoreLocked(f), true
		}
	}
	defer a.mu.Unlock()
	if c == nil || (p.Cwd != "" && p.Cwd != c.cwd) {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": "SESSION_NOT_FOUND", "message": "iac-code session is not available"}})
		return
	}
	if c.backupOnce {
		c.backupOnce, c.restoreNext = false, true
		writeJSON(w, http.StatusConflict, map[string]any{"error": map[string]any{"code": "SESSION_BACKUP_NOT_READY",
			"message": "Session backup is not ready.", "retryable": true}})
		return
	}
	status := "current"
	if restored || c.restoreNext {
		c.restoreNext, status = false, "restored"
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": status})
}

// sessionLocked finds the context in memory whose session is sessionID.
// Caller holds a.mu.
func (a *Agent) sessionLocked(sessionID string) *ctxRec {
	for _, x := range a.ctxs {
		if x.sessionID == sessionID {
			return x
		}
	}
	return nil
}
