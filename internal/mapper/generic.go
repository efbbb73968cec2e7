package mapper

import (
	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/projection"
)

// The generic A2A profile (Config.Generic; docs/upstream.md §10) reads only
// what A2A 1.0 itself defines: the text of agent status messages and of
// artifact parts, the task state, and the status message of a task that
// waits for the user. No metadata is interpreted.

// ArtifactEventName is the CUSTOM event that carries the non-text parts of
// an artifact in the generic profile.
const ArtifactEventName = "a2a.artifact.v1"

// genericEvent maps one A2A event of the generic profile.
func (m *Mapper) genericEvent(dst []agui.Event, ev *a2a.Event, withText bool) []agui.Event {
	if !withText {
		return dst // a task snapshot is state, not output
	}
	switch ev.Kind {
	case a2a.KindArtifactUpdate:
		return m.genericArtifact(dst, ev.Artifact)
	case a2a.KindMessage:
		return m.agentMessageText(dst, ev.Message)
	case a2a.KindStatusUpdate:
		// The message of a waiting or failed task is the interrupt's or
		// the error's message, not output.
		if outputState(ev.State()) && ev.Status != nil {
			return m.agentMessageText(dst, ev.Status.Message)
		}
	}
	// A Task object is state, not output: the JavaScript SDK opens every
	// streaming turn with one that carries the earlier history.
	return dst
}

// agentMessageText streams the text of an agent's (or unattributed) message as
// text of the open message: SDK agents give each status message an id of
// its own, and every chunk continues the one message.
func (m *Mapper) agentMessageText(dst []agui.Event, msg *a2a.Message) []agui.Event {
	if msg == nil || !isAgentOrUnset(msg.Role) {
		return dst
	}
	if text := msg.Text(); text != "" {
		return m.text(dst, text, "", false, true)
	}
	return dst
}

// outputState reports whether the status message of a state is output.
func outputState(s string) bool {
	switch s {
	case a2a.StateFailed, a2a.StateRejected, a2a.StateCanceled, a2a.StateInputRequired, a2a.StateAuthRequired:
		return false
	}
	return true
}

func isAgentOrUnset(role string) bool { return role == "" || isAgentRole(role) }

// genericArtifact streams the text parts of an artifact update as text of
// one message per artifact id and the other parts, if any, as one CUSTOM
// a2a.artifact.v1 event holding the artifact with only those parts.
func (m *Mapper) genericArtifact(dst []agui.Event, art map[string]any) []agui.Event {
	if art == nil {
		return dst
	}
	parts, _ := art["parts"].([]any)
	aid := str(art["artifactId"])
	var other []any
	for _, p := range parts {
		pm, _ := p.(map[string]any)
		text, isText := pm["text"].(string)
		if !isText {
			if pm != nil {
				other = append(other, pm)
			}
			continue
		}
		if text == "" {
			continue
		}
		dst = m.text(dst, text, m.artifactMessage(aid), false, true)
	}
	if len(other) > 0 {
		v := withSchemaVersion(art)
		v["parts"] = other
		dst = append(dst, &agui.Custom{Name: ArtifactEventName, Value: v})
	}
	return dst
}

// artifactMessage returns the AG-UI message id of an artifact's text, one
// per artifact id and run: agents reuse artifact ids across tasks, and a
// message id must not repeat in a thread.
func (m *Mapper) artifactMessage(aid string) string {
	if m.artifactMsgs == nil {
		m.artifactMsgs = make(map[string]string)
	}
	id, ok := m.artifactMsgs[aid]
	if !ok {
		id = "artifact-" + m.newID()
		m.artifactMsgs[aid] = id
	}
	return id
}

// genericInputs returns the one input of an event whose task waits for the
// user (INPUT_REQUIRED or AUTH_REQUIRED), at most once per run.
func (m *Mapper) genericInputs(ev *a2a.Event) []Input {
	var kind projection.Kind
	switch ev.State() {
	case a2a.StateInputRequired:
		kind = projection.KindA2AInputRequired
	case a2a.StateAuthRequired:
		kind = projection.KindA2AAuthRequired
	default:
		return nil
	}
	if _, done := m.returned[genericInputKey]; done {
		return nil
	}
	if m.returned == nil {
		m.returned = make(map[string]struct{})
	}
	m.returned[genericInputKey] = struct{}{}
	id := "input-" + m.newID()
	p := map[string]any{
		"schemaVersion": 1,
		"kind":          string(kind),
		"inputId":       id,
		"required":      true,
	}
	if ev.Status != nil && ev.Status.Message != nil {
		if text := ev.Status.Message.Text(); text != "" {
			p["prompt"] = text
		}
	}
	if ev.TaskID != "" {
		p["requestTaskId"] = ev.TaskID
	}
	if ev.ContextID != "" {
		p["contextId"] = ev.ContextID
	}
	return []Input{{ID: id, Projection: p}}
}

// genericInputKey marks the run's one generic input in Mapper.returned.
const genericInputKey = "generic:"

// genericInterrupt is the interrupt of a generic input: reason
// input_required or auth_required, the agent's question as its message,
// and a responseSchema accepting {"text": "<string>"}.
func genericInterrupt(p map[string]any) agui.Interrupt {
	kind := projection.KindOf(p)
	in := agui.Interrupt{ID: str(p["inputId"]), Reason: "input_required", Message: str(p["prompt"])}
	if kind == projection.KindA2AAuthRequired {
		in.Reason = "auth_required"
	}
	if in.Message == "" {
		in.Message = i18n.T(i18n.Lang(normalizeLang(p["language"])), i18n.MsgInputRequired)
	}
	in.ResponseSchema = TextAnswerSchema()
	in.Metadata = withSchemaVersion(p)
	return in
}

// TextAnswerSchema is the responseSchema of a generic interrupt.
func TextAnswerSchema() map[string]any {
	return map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"text": map[string]any{"type": "string"}},
		"required":             []any{"text"},
		"additionalProperties": false,
	}
}
