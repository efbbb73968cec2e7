package demoagent

import (
	"context"
	"net/http"
	"slices"
	"time"
)

// A message sent to a running pipeline task is a user interrupt that the
// pipeline classifies (upstream.md §2.2); the adapter's active guidance
// sends one (protocol.md §5.13). The agent publishes interrupt_received and
// interrupt_classified on the task, answers the sender with that same
// frame and ends its stream, and hands the text to the running script:
// the "guided" pipeline waits for it and applies it.

// maxGuided bounds the guidance ids a task remembers.
const maxGuided = 100

// guidanceWait is how long the guided pipeline waits for guidance before
// it goes on with its defaults.
const guidanceWait = 30 * time.Second

// guide handles a non-permission message naming a running pipeline task.
// A guidance_id already applied to the task is classified "ignored" and
// not applied again, so a client may retry a guidance safely.
func (a *Agent) guide(q *sendReq, t *taskRec) {
	m := q.msg
	gid := metaString(m.iac(), "guidance_id", "guidanceId")
	// Holding pubMu keeps the run from ending (or publishing) between the
	// check and the frame, so the frame never lands on a finished task.
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	a.mu.Lock()
	if !t.active {
		a.mu.Unlock()
		q.fail(newRPCError(codeParams, "Task "+t.t.ID+" is not running."))
		return
	}
	t.t.History = append(t.t.History, m.echo())
	dup := gid != "" && slices.Contains(t.guided, gid)
	if gid != "" && !dup {
		t.guided = trimTail(append(t.guided, gid), maxGuided)
	}
	if t.guidance == nil {
		t.guidance = make(chan string, 8)
	}
	ch := t.guidance
	e := a.emitterFor(m, t)
	a.mu.Unlock()
	e.ctx = q.r.Context()
	text := m.text()
	action, reason := "supplement", tr(e.lang, msgGuidanceSupplement)
	if dup {
		action, reason = "ignored", tr(e.lang, msgGuidanceDuplicate)
	}
	recv := e.envelope("interrupt_received", "interrupt", "working", map[string]any{"messageLength": len([]rune(text))}, nil)
	cls := e.envelope("interrupt_classified", "interrupt", "working", map[string]any{"action": action,
		"candidateScope": "none", "reason": reason, "paused": false}, nil)
	r := e.pipeResult(nil, recv, cls)
	if err := a.publishLocked(e.ctx, t, r); err != nil {
		return // the sender left
	}
	if !dup {
		a.journalInput(m)
		select {
		case ch <- text:
		default: // a script that does not read guidance ignores it
		}
	}
	if !q.streaming {
		a.mu.Lock()
		snap := a.snapshot(t, 0)
		a.mu.Unlock()
		writeRaw(q.w, http.StatusOK, rpcResponse(q.id, streamResult{Task: &snap}))
		return
	}
	_ = startSSE(q.w).data(rpcResponse(q.id, r))
}

// guidedPipeline plans two steps, network then compute. Each waits for
// guidance (at most guidanceWait) and applies what arrives, so a client
// can steer the running pipeline twice; then it completes.
func (e *emitter) guidedPipeline(ctx context.Context) error {
	if err := e.pipe(e.pipelineStart("network", "compute")); err != nil {
		return err
	}
	e.a.mu.Lock()
	if e.t.guidance == nil {
		e.t.guidance = make(chan string, 8)
	}
	ch := e.t.guidance
	e.a.mu.Unlock()
	for i, k := range []textKey{msgGuidanceAwaitNetwork, msgGuidanceAwaitCompute} {
		id := []string{"network", "compute"}[i]
		step := stepCoord(id, i+1, 2)
		delta := func(s string) map[string]any {
			return e.envelope("text_delta", "step", "working", map[string]any{"text": s}, map[string]any{"step": step})
		}
		if err := e.pipe(e.stepStarted(id, i+1, 2), delta(tr(e.lang, k))); err != nil {
			return err
		}
		reply := tr(e.lang, msgGuidanceNone)
		tm := time.NewTimer(guidanceWait)
		select {
		case g := <-ch:
			reply = tr(e.lang, msgGuidanceApplied) + g
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		}
		tm.Stop()
		if err := e.pipe(delta(reply+" "), e.stepCompleted(id, i+1, 2)); err != nil {
			return err
		}
	}
	return e.complete(2)
}
