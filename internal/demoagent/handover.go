package demoagent

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// The "hand over" pipeline: a pause confirmation that ends its turn while
// the session is being handed to another sandbox (handoff.go). iac-code
// hands a session over only at an input point (runningControllerTransfer
// false): the task is input-required and its checkpoint written before the
// frame that ends the turn is published. Here that frame is held until
// this agent's prepare has committed the session, at most handoverWait, so
// the AG-UI thread copied by prepare still names the task and has no
// interrupt. The guidance the orchestrator kept for the session (its
// pendingInput) is then delivered on the destination as an active
// guidance, which answers the restored confirmation: the continuation
// reports the text and each image it received (size and SHA-256 of the
// bytes), once.

// handoverWait bounds the hold; after it the turn ends as a plain pause
// confirmation.
const handoverWait = 30 * time.Second

// handoverPause runs the "hand over" pipeline.
func (e *emitter) handoverPause() error {
	env, err := e.pauseStart(true)
	if err != nil {
		return err
	}
	r := e.pipeResult(nil, env)
	release := e.a.checkpoint(e.t, r)
	tm := time.NewTimer(handoverWait)
	defer tm.Stop()
	select {
	case <-release:
	case <-tm.C:
	case <-e.ctx.Done():
		return e.ctx.Err()
	}
	return e.send(r)
}

// checkpoint makes r's status the task's and writes its backup, without
// publishing r; the channel closes when a prepare committed the session
// (releaseCheckpoint).
func (a *Agent) checkpoint(t *taskRec, r streamResult) <-chan struct{} {
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	a.mu.Lock()
	a.applyStatus(t, r.StatusUpdate)
	t.updatedAt = time.Now()
	bk := a.backupTaskLocked(t)
	ch := make(chan struct{})
	t.handover = ch
	a.mu.Unlock()
	a.saveBackup(bk)
	return ch
}

// releaseCheckpoint lets a held "hand over" turn end.
func (a *Agent) releaseCheckpoint(taskID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.tasks[taskID]; t != nil && t.handover != nil {
		close(t.handover)
		t.handover = nil
	}
}

// imageDescriptors describes the image parts of a message as received:
// file name, media type, size and SHA-256 of the decoded bytes.
func imageDescriptors(parts []part) []any {
	var out []any
	for _, p := range parts {
		if !strings.HasPrefix(p.MediaType, "image/") || len(p.Data) == 0 {
			continue
		}
		var d struct {
			Bytes    string `json:"bytes"`
			Filename string `json:"filename"`
		}
		if json.Unmarshal(p.Data, &d) != nil {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(d.Bytes)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(raw)
		out = append(out, map[string]any{"filename": d.Filename, "mediaType": p.MediaType, "sizeBytes": len(raw),
			"sha256": hex.EncodeToString(sum[:])})
	}
	return out
}
