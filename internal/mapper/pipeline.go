package mapper

import (
	"sort"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

// customPipelineTypes are the envelope types forwarded as CUSTOM
// iac-code.pipeline.v1 (the list of the protocol reference).
var customPipelineTypes = map[string]bool{
	"pipeline_started": true, "pipeline_resumed": true, "pipeline_completed": true,
	"pipeline_error": true, "pipeline_warning": true, "backup_blocked": true,
	"candidate_started": true, "candidate_completed": true, "candidate_failed": true,
	"candidate_interrupted": true, "candidate_restart_requested": true,
	"candidate_selected": true, "candidate_detail_shown": true, "candidate_step_failed": true,
	"sub_pipeline_started": true, "sub_pipeline_completed": true, "sub_step_failed": true,
	"step_failed":    true,
	"stack_progress": true, "stack_instances_progress": true, "stack_current_changed": true,
	"cleanup_started": true, "cleanup_progress": true, "cleanup_completed": true, "cleanup_failed": true,
	"rollback_triggered": true, "rollback_completed": true,
	"context_compaction_started": true, "context_compacted": true,
	"context_compaction_failed": true, "fields_marked_stale": true,
	"diagram_shown": true, "mcp_status": true, "tool_progress": true,
}

// CustomPipelineTypes returns the envelope types forwarded as CUSTOM
// iac-code.pipeline.v1, sorted (internal/contract publishes them).
func CustomPipelineTypes() []string {
	out := make([]string, 0, len(customPipelineTypes))
	for t := range customPipelineTypes {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// liveEnvelope de-duplicates a live envelope by eventId seen in this run,
// or by a sequence at or below the cursor, then maps it.
func (m *Mapper) liveEnvelope(dst []agui.Event, env map[string]any) []agui.Event {
	eid := str(env["eventId"])
	if eid != "" {
		if _, seen := m.seenEvents[eid]; seen {
			return dst
		}
	}
	seq, _ := a2a.Int(env["sequence"])
	if seq != 0 && seq <= m.seq {
		return dst
	}
	m.markSeen(eid)
	if seq > m.seq {
		m.seq = seq
	}
	return m.envelope(dst, env)
}

func (m *Mapper) markSeen(eid string) {
	if eid == "" {
		return
	}
	if m.seenEvents == nil {
		m.seenEvents = make(map[string]struct{}, 64)
	}
	m.seenEvents[eid] = struct{}{}
}

// envelope maps one accepted envelope: standard mapping, step lifecycle,
// then the CUSTOM event for allowlisted types.
func (m *Mapper) envelope(dst []agui.Event, env map[string]any) []agui.Event {
	typ := str(env["eventType"])
	if data, ok := env["data"].(map[string]any); ok {
		dst = m.standardEnvelope(dst, env, typ, data)
	}
	dst = m.stepLifecycle(dst, env, typ)
	if customPipelineTypes[typ] {
		dst = append(dst, &agui.Custom{Name: "iac-code.pipeline.v1", Value: env})
	}
	return dst
}

func (m *Mapper) standardEnvelope(dst []agui.Event, env map[string]any, typ string, data map[string]any) []agui.Event {
	switch typ {
	case "text_delta":
		if text := str(data["text"]); text != "" {
			return m.text(dst, text, m.pipelineMessageID(env), true, true)
		}
	case "thinking_delta":
		return m.thinking(dst, data, m.pipelineMessageID(env))
	case "tool_started":
		id := str(data["toolUseId"])
		if id == "" {
			id = "tool-" + m.newID()
		}
		input, ok := data["input"]
		if !ok || input == nil {
			input = map[string]any{"summary": nil}
		}
		return m.toolInput(dst, id, str(data["toolName"]), input)
	case "tool_result":
		id := str(data["toolUseId"])
		if id == "" {
			id = "tool-" + m.newID()
		}
		return m.ToolResult(dst, id, jsonText(data["result"]))
	case "usage":
		m.recordUsage(data)
	}
	return dst
}

// pipelineMessageID is pipeline-message:<pipelineRunId>:<scope>[:<coords>],
// the coordinates being the runId (else id) of candidate, candidateStep and
// step, without duplicates, so parallel candidates never share a message.
func (m *Mapper) pipelineMessageID(env map[string]any) string {
	scope := str(env["scope"])
	if scope == "" {
		scope = "pipeline"
	}
	var coords [3]string
	n := 0
	for _, k := range [...]string{"candidate", "candidateStep", "step"} {
		c, ok := env[k].(map[string]any)
		if !ok {
			continue
		}
		v := str(c["runId"])
		if v == "" {
			v = str(c["id"])
		}
		if v == "" || (n > 0 && coords[0] == v) || (n > 1 && coords[1] == v) {
			continue
		}
		coords[n] = v
		n++
	}
	var b strings.Builder
	size := len("pipeline-message:") + len(m.pipelineRunID) + 1 + len(scope)
	for _, c := range coords[:n] {
		size += 1 + len(c)
	}
	b.Grow(size)
	b.WriteString("pipeline-message:")
	b.WriteString(m.pipelineRunID)
	b.WriteByte(':')
	b.WriteString(scope)
	for _, c := range coords[:n] {
		b.WriteByte(':')
		b.WriteString(c)
	}
	return b.String()
}

// stepLifecycle maps step start and finish envelopes (protocol.md §4.12).
func (m *Mapper) stepLifecycle(dst []agui.Event, env map[string]any, typ string) []agui.Event {
	var starts bool
	switch typ {
	case "step_started", "candidate_step_started", "input_received":
		starts = true
	case "step_completed", "step_failed", "candidate_step_completed", "candidate_step_failed":
	default:
		return dst
	}
	key, name := stepKey(env)
	if key == "" {
		return dst
	}
	if starts {
		m.durable[key] = struct{}{}
		if _, open := m.runSteps[key]; open {
			return dst
		}
		m.runSteps[key] = name
		return append(dst, &agui.StepStarted{StepName: name})
	}
	if _, open := m.durable[key]; !open {
		return dst
	}
	delete(m.durable, key)
	if runName, open := m.runSteps[key]; open {
		delete(m.runSteps, key)
		return append(dst, &agui.StepFinished{StepName: runName})
	}
	// Durably open but not started in this run: AG-UI needs a matching
	// STEP_STARTED in the same run, so emit a zero-length pair.
	return append(dst, &agui.StepStarted{StepName: name}, &agui.StepFinished{StepName: name})
}

// stepKey returns the step key and AG-UI step name of an envelope, or "".
func stepKey(env map[string]any) (key, name string) {
	var id string
	if cs, ok := env["candidateStep"].(map[string]any); ok {
		id = str(cs["id"])
	}
	if id == "" {
		if s, ok := env["step"].(map[string]any); ok {
			id = str(s["id"])
		}
	}
	if id == "" {
		return "", ""
	}
	if c, ok := env["candidate"].(map[string]any); ok {
		cand := str(c["id"])
		if cand == "" {
			cand = str(c["subPipelineId"])
		}
		if cand == "" {
			cand = str(c["runId"])
		}
		if cand != "" {
			key = "candidate:" + cand + ":" + id
			return key, key
		}
	}
	return "step:" + id, id
}

// stepName is the AG-UI name of a step key: the bare id for step: keys,
// the full key for candidate keys.
func stepName(key string) string {
	if rest, ok := strings.CutPrefix(key, "step:"); ok {
		return rest
	}
	return key
}

// ReopenSteps appends one STEP_STARTED per durable open step, sorted by key
// (protocol.md §4.4 step 3). They count as opened in this run.
func (m *Mapper) ReopenSteps(dst []agui.Event) []agui.Event {
	keys := sortedKeys(m.durable)
	for _, k := range keys {
		if _, open := m.runSteps[k]; open {
			continue
		}
		name := stepName(k)
		m.runSteps[k] = name
		dst = append(dst, &agui.StepStarted{StepName: name})
	}
	return dst
}

// MapPipelineState appends the recovery view of protocol.md §9.2: one
// ACTIVITY_SNAPSHOT, then the catch-up envelopes de-duplicated by eventId
// (by sequence when there is none). The cursor becomes the largest of
// itself, the events' sequences and snapshot.lastSequence; it never moves
// back, so a stale snapshot cannot replay envelopes already delivered.
func (m *Mapper) MapPipelineState(dst []agui.Event, st *a2a.PipelineState) []agui.Event {
	if st == nil || st.Snapshot == nil {
		return dst
	}
	if id := str(st.Snapshot["pipelineRunId"]); id != "" {
		m.pipelineRunID = id
	}
	dst = append(dst, &agui.ActivitySnapshot{
		MessageID:    "pipeline:" + m.pipelineRunID,
		ActivityType: "iac-code.pipeline.v1",
		Content: map[string]any{
			"schemaVersion": 1,
			"pipelineRunId": m.pipelineRunID,
			"snapshot":      st.Snapshot,
		},
		Replace: true,
	})
	for _, env := range st.Events {
		if env == nil {
			continue
		}
		eid := str(env["eventId"])
		seq, _ := a2a.Int(env["sequence"])
		if eid != "" {
			if _, seen := m.seenEvents[eid]; seen {
				continue
			}
		} else if seq != 0 && seq <= m.seq {
			continue
		}
		m.markSeen(eid)
		if seq > m.seq {
			m.seq = seq
		}
		dst = m.envelope(dst, env)
	}
	if last, ok := a2a.Int(st.Snapshot["lastSequence"]); ok && last > m.seq {
		m.seq = last
	}
	return dst
}
