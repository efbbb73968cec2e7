package demoagent

import (
	"context"
	"net/http"
	"time"
)

// Pipeline envelopes (upstream.md §3.5). Envelopes are built with Go
// ints and journaled as plain JSON for /iac-code/pipeline/state; pbify turns
// them into protobuf-Struct doubles when they ride in frame metadata.

func pbify(v any) any {
	switch x := v.(type) {
	case int:
		return num(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = pbify(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = pbify(e)
		}
		return out
	}
	return v
}

// envelope builds, sequences and journals one pipeline event.
func (e *emitter) envelope(eventType, scope, status string, data map[string]any, extra map[string]any) map[string]any {
	return e.envelopeID("evt-"+hex32(), eventType, scope, status, data, extra)
}

func (e *emitter) envelopeID(eventID, eventType, scope, status string, data map[string]any, extra map[string]any) map[string]any {
	if data == nil {
		data = map[string]any{}
	}
	e.a.mu.Lock()
	seq := 1
	if e.t.ctx != nil {
		e.t.ctx.seq++
		seq = e.t.ctx.seq
	}
	if e.t.runName == "" {
		e.t.runName = "pipeline-run-" + e.tid
	}
	env := map[string]any{
		"schemaVersion": "1.0", "extensionUri": pipelineExt, "eventId": eventID, "sequence": seq,
		"createdAt": time.Now().UTC().Format(time.RFC3339), "eventType": eventType, "scope": scope,
		"pipelineRunId": e.t.runName, "taskId": e.tid, "contextId": e.cid, "pipelineName": e.pipeName(),
		"data": data, "iacCodeSessionId": e.sid, "visibility": "committed",
	}
	if status != "" {
		env["status"] = status
		e.t.lastPipe = status
	}
	for k, v := range extra {
		env[k] = v
	}
	e.t.journal = trimTail(append(e.t.journal, env), maxJournal)
	e.a.mu.Unlock()
	return env
}

func (e *emitter) pipeName() string {
	if e.pipeline != "" {
		return e.pipeline
	}
	return "selling"
}

// pipeIAC is the iac_code object of a frame carrying one envelope.
func (e *emitter) pipeIAC(env map[string]any) map[string]any {
	return map[string]any{"pipeline": pbify(env)}
}

func frameState(status string) string {
	switch status {
	case "input_required", "waiting_input":
		return stateInputRequired
	case "completed":
		return stateCompleted
	case "failed":
		return stateFailed
	case "canceled":
		return stateCanceled
	}
	return stateWorking
}

// pipe publishes envelopes: one as metadata.iac_code.pipeline, several as
// one pipelineBatch frame whose state and input come from the last one.
func (e *emitter) pipe(envs ...map[string]any) error { return e.pipeWith(nil, envs...) }

// pipeWith also puts an input projection on the frame.
func (e *emitter) pipeWith(input map[string]any, envs ...map[string]any) error {
	return e.send(e.pipeResult(input, envs...))
}

// pipeResult builds the frame that pipeWith publishes.
func (e *emitter) pipeResult(input map[string]any, envs ...map[string]any) streamResult {
	last := envs[len(envs)-1]
	st, _ := last["status"].(string)
	var iac map[string]any
	if len(envs) == 1 {
		iac = e.pipeIAC(last)
	} else {
		evs := make([]any, len(envs))
		for i, env := range envs {
			evs[i] = pbify(env)
		}
		iac = map[string]any{"pipelineBatch": map[string]any{"schemaVersion": "1.0", "extensionUri": pipelineExt, "events": evs}}
	}
	if input != nil {
		iac["input"] = pbify(input)
	}
	state := frameState(st)
	return e.statusResult(state, nil, iac, state != stateWorking)
}

// park ends the run on a pipeline input answered later by a text message.
// The continuation is rebuilt from spec alone, so an agent restoring the
// session from a backup continues the same way (backup.go).
func (e *emitter) park(spec waitSpec) {
	w := textWaitFor(spec)
	e.a.mu.Lock()
	e.t.wait = w
	if e.t.ctx != nil {
		e.t.ctx.waitingTask = e.tid
	}
	e.a.mu.Unlock()
}

// resumeInput answers a parked question or selection with the text of the
// message, running the continuation on the same task.
func (a *Agent) resumeInput(q *sendReq, t *taskRec) {
	a.mu.Lock()
	w := t.wait
	if w == nil || t.active {
		a.mu.Unlock()
		q.fail(newRPCError(codeParams, "input_response_mismatch: no pending input."))
		return
	}
	if w.check != nil {
		if err := w.check(q.msg.text()); err != nil {
			a.mu.Unlock()
			q.fail(err)
			return
		}
	}
	t.wait = nil
	if t.ctx != nil && t.ctx.waitingTask == t.t.ID {
		t.ctx.waitingTask = ""
	}
	t.t.History = append(t.t.History, q.msg.echo())
	s := a.subscribe(t)
	e := a.emitterFor(q.msg, t)
	answer := q.msg.text()
	a.startRunLocked(t, true, func(ctx context.Context, e2 *emitter) error { return w.resume(ctx, e2, answer) }, e)
	a.mu.Unlock()
	a.respond(q, t, s)
}

// complete publishes the terminal pipeline envelopes and COMPLETED.
func (e *emitter) complete(totalSteps int) error {
	e.a.mu.Lock()
	if e.t.ctx != nil {
		e.t.ctx.handoffTask = e.tid
	}
	e.a.mu.Unlock()
	done := e.envelope("pipeline_completed", "pipeline", "completed", map[string]any{"totalSteps": totalSteps}, nil)
	ack1 := e.envelope("backup_committed", "pipeline", "", map[string]any{"committedEventId": done["eventId"],
		"committedEventType": "pipeline_completed", "committedSequence": done["sequence"]}, nil)
	hand := e.envelope("pipeline_handoff_ready", "pipeline", "completed", map[string]any{"action": "switch_to_normal",
		"targetMode": "normal", "outcome": "completed", "summary": "Pipeline finished; continue in normal chat."}, nil)
	ack2 := e.envelope("backup_committed", "pipeline", "completed", map[string]any{"committedEventId": hand["eventId"],
		"committedEventType": "pipeline_handoff_ready", "committedSequence": hand["sequence"]}, nil)
	return e.pipe(done, ack1, hand, ack2)
}

func stepCoord(id string, index, total int) map[string]any {
	return map[string]any{"id": id, "runId": "step-" + id + "-1", "attempt": 1, "index": index, "total": total, "type": "normal"}
}

func candCoord(i int, name string) map[string]any {
	id := "cand-" + itoa(i)
	return map[string]any{"id": id, "runId": "candidate-" + id + "-" + itoa(i) + "-1", "index": i, "attempt": 1,
		"name": name, "pipelineName": "candidate", "totalSteps": 2, "steps": []any{}}
}

func candStepCoord(cand int, id string, index int) map[string]any {
	return map[string]any{"id": id, "runId": "candidate-cand-" + itoa(cand) + "-" + id + "-1", "attempt": 1, "index": index, "total": 2}
}

// stepStarted and stepCompleted build the parent step lifecycle envelopes.
func (e *emitter) stepStarted(id string, index, total int) map[string]any {
	return e.envelope("step_started", "step", "working", map[string]any{"index": index, "attempt": 1, "total": total,
		"name": id, "stepType": "normal", "uiMode": "chat"}, map[string]any{"step": stepCoord(id, index, total)})
}

func (e *emitter) stepCompleted(id string, index, total int) map[string]any {
	return e.envelope("step_completed", "step", "working", map[string]any{"durationS": 1.5, "conclusionField": id + "_result",
		"conclusion": "ok"}, map[string]any{"step": stepCoord(id, index, total)})
}

// servePipelineState answers GET /iac-code/pipeline/state (§5.3).
func (a *Agent) servePipelineState(w http.ResponseWriter, r *http.Request) {
	qv := r.URL.Query()
	taskID, contextID := qv.Get("taskId"), qv.Get("contextId")
	if taskID == "" && contextID == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "contextId or taskId is required"})
		return
	}
	after, hasAfter, ok := parseAfter(qv.Get("afterSequence"), qv.Has("afterSequence"))
	if !ok {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "afterSequence must be a non-negative integer"})
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var t *taskRec
	if taskID != "" {
		t = a.tasks[taskID]
		if t != nil && contextID != "" && t.t.ContextID != contextID {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": "A2A task/context mismatch"})
			return
		}
	} else {
		for _, c := range a.tasks {
			if c.t.ContextID == contextID && len(c.journal) > 0 && (t == nil || c.updatedAt.After(t.updatedAt)) {
				t = c
			}
		}
	}
	if t == nil || len(t.journal) == 0 {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "A2A pipeline state not found"})
		return
	}
	snap := a.pipelineSnapshot(t)
	if !hasAfter {
		after = uint64(snap["lastSequence"].(int))
	}
	events := []any{}
	for _, env := range t.journal {
		if uint64(env["sequence"].(int)) > after {
			events = append(events, env)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"snapshot": snap, "events": events})
}
