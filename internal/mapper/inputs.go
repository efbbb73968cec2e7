package mapper

import (
	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/projection"
)

// Input is one required A2A input, reduced to its persisted projection
// (projection.Project: a deep copy holding only the public keys).
type Input struct {
	ID         string
	Projection map[string]any
	// Sideband marks a concurrent sub-pipeline wait; its answer is sent
	// as a non-streaming SendMessage (protocol.md §5.8).
	Sideband bool
}

// RequiredInputs returns the new required inputs of ev, from
// iac_code.input then iac_code.pendingPermissions: only required === true,
// de-duplicated by inputId, skipping inputs already answered in this
// execution and inputs this Mapper already returned. An input without an
// inputId gets "input-<hex>", written into its projection so the pending
// interrupt keeps one id.
func (m *Mapper) RequiredInputs(ev *a2a.Event) []Input {
	if m.generic {
		return m.genericInputs(ev)
	}
	if m.plain(ev) {
		return nil
	}
	ic := ev.IacCode()
	direct, _ := ic["input"].(map[string]any)
	pending, _ := ic["pendingPermissions"].([]any)
	if direct == nil && len(pending) == 0 {
		return nil
	}
	sideband := make(map[string]bool)
	if direct != nil && (str(direct["scope"]) == "candidate" || isString(direct["subPipelineId"])) {
		if id := str(direct["inputId"]); id != "" {
			sideband[id] = true
		}
	}
	for _, p := range pending {
		if pm, ok := p.(map[string]any); ok {
			if id := str(pm["inputId"]); id != "" {
				sideband[id] = true
			}
		}
	}
	var out []Input
	add := func(raw map[string]any, sb bool) {
		if raw == nil || raw["required"] != true {
			return
		}
		id := str(raw["inputId"])
		key := id
		if key == "" {
			key = "json:" + string(appendJSON(nil, raw))
		}
		if _, done := m.returned[key]; done {
			return
		}
		if id != "" && m.answered != nil && m.answered(id) {
			return
		}
		if m.returned == nil {
			m.returned = make(map[string]struct{})
		}
		m.returned[key] = struct{}{}
		proj := projection.Project(raw)
		if id == "" {
			id = "input-" + m.newID()
			proj["inputId"] = id
		}
		out = append(out, Input{ID: id, Projection: proj, Sideband: sb || sideband[id]})
	}
	if direct != nil {
		add(direct, str(direct["scope"]) == "candidate" || isString(direct["subPipelineId"]))
	}
	for _, p := range pending {
		pm, _ := p.(map[string]any)
		add(pm, true)
	}
	return out
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// ForeignInput reports whether an input names another A2A task or context
// than the bound ones (protocol.md §5.1: A2A_PROTOCOL_ERROR "An interrupt
// belongs to another A2A task/context."). Only ids the input carries are
// compared, as in the original.
func ForeignInput(in Input, taskID, contextID string) bool {
	if t := str(in.Projection["requestTaskId"]); t != "" && t != taskID {
		return true
	}
	if c := str(in.Projection["contextId"]); c != "" && c != contextID {
		return true
	}
	return false
}
