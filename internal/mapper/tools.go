package mapper

import (
	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

// tool maps iac_code.tool (protocol.md §4.9).
func (m *Mapper) tool(dst []agui.Event, t map[string]any) []agui.Event {
	status := str(t["status"])
	id := str(t["toolUseId"])
	if id == "" {
		id = "tool-" + m.newID()
	}
	switch status {
	case "started":
		return m.toolStart(dst, id, str(t["name"]))
	case "input_complete":
		input, ok := t["toolInput"]
		if !ok || input == nil {
			input = map[string]any{"summary": t["inputSummary"]}
		}
		return m.toolInput(dst, id, str(t["name"]), input)
	case "completed", "failed":
		return m.ToolResult(dst, id, jsonText(t["result"]))
	case "progress":
		return append(dst, &agui.Custom{Name: "iac-code.tool-progress.v1", Value: withSchemaVersion(t)})
	}
	return dst
}

// toolStart opens a tool call unless it is open; the text so far becomes a
// snapshot digest because a resumed agent may replay it.
func (m *Mapper) toolStart(dst []agui.Event, id, name string) []agui.Event {
	if ms := m.msgs[m.current]; m.current != "" && ms != nil {
		m.recordMsg(ms)
		ms.gap = true // text after the tool is a new segment
	}
	for _, open := range m.tools {
		if open == id {
			return dst
		}
	}
	if name == "" {
		name = "tool"
	}
	m.tools = append(m.tools, id)
	return append(dst, &agui.ToolCallStart{ToolCallID: id, ToolCallName: name, ParentMessageID: m.current})
}

// toolInput opens the call if needed, then emits its arguments and ends it.
func (m *Mapper) toolInput(dst []agui.Event, id, name string, input any) []agui.Event {
	dst = m.toolStart(dst, id, name)
	dst = append(dst,
		&agui.ToolCallArgs{ToolCallID: id, Delta: jsonText(input)},
		&agui.ToolCallEnd{ToolCallID: id})
	for i, open := range m.tools {
		if open == id {
			m.tools = append(m.tools[:i], m.tools[i+1:]...)
			break
		}
	}
	return dst
}

// ToolResult appends TOOL_CALL_RESULT for toolCallID, once per id in this
// run; later calls for the same id append nothing.
func (m *Mapper) ToolResult(dst []agui.Event, toolCallID, content string) []agui.Event {
	if _, seen := m.toolResults[toolCallID]; seen {
		return dst
	}
	if m.toolResults == nil {
		m.toolResults = make(map[string]struct{})
	}
	m.toolResults[toolCallID] = struct{}{}
	return append(dst, &agui.ToolCallResult{
		MessageID:  "tool-result-" + toolCallID,
		ToolCallID: toolCallID,
		Content:    content,
		Role:       "tool",
	})
}

// jsonText is a tool result or argument as text: strings as they are,
// anything else as compact sorted JSON.
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return string(appendJSON(nil, v))
}

// recordUsage adds one usage object to the run's usage, grouped by
// (provider, model). Counts that are not integral numbers count as 0.
func (m *Mapper) recordUsage(u map[string]any) {
	provider, model := str(u["provider"]), str(u["model"])
	n := func(k string) int64 {
		v, _ := a2a.Int(u[k])
		return v
	}
	for i := range m.usage {
		e := &m.usage[i]
		if e.Provider == provider && e.Model == model {
			e.InputTokens += n("inputTokens")
			e.OutputTokens += n("outputTokens")
			e.TotalTokens += n("totalTokens")
			e.CachedInputTokens += n("cachedInputTokens")
			return
		}
	}
	m.usage = append(m.usage, agui.TokenUsage{
		Provider:          provider,
		Model:             model,
		InputTokens:       n("inputTokens"),
		OutputTokens:      n("outputTokens"),
		TotalTokens:       n("totalTokens"),
		CachedInputTokens: n("cachedInputTokens"),
	})
}

// Usage returns the run's usage grouped by (provider, model) in order of
// first appearance, or nil when none was recorded.
func (m *Mapper) Usage() []agui.TokenUsage {
	if len(m.usage) == 0 {
		return nil
	}
	return append([]agui.TokenUsage(nil), m.usage...)
}
