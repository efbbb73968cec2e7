package agui

import (
	"encoding/json"
	"fmt"
)

// The seven AG-UI 1.0 message roles.
const (
	RoleDeveloper = "developer"
	RoleSystem    = "system"
	RoleAssistant = "assistant"
	RoleUser      = "user"
	RoleTool      = "tool"
	RoleActivity  = "activity"
	RoleReasoning = "reasoning"
)

// decodeMessages checks the required messages array, each entry against
// its role's branch of the 1.0 MessageSchema union (agui.md §2.1).
func decodeMessages(raw json.RawMessage) ([]Message, error) {
	if raw == nil {
		return nil, invalid("messages", "is required")
	}
	items, err := decodeArray(raw, "messages")
	if err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(items))
	for i, item := range items {
		m, err := decodeMessage(item, fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func decodeMessage(raw json.RawMessage, path string) (Message, error) {
	var m Message
	o, err := decodeObject(raw, path)
	if err != nil {
		return m, err
	}
	path += "."
	if m.ID, err = o.id("id", path); err != nil {
		return m, err
	}
	if m.Role, err = o.str("role", path); err != nil {
		return m, err
	}
	if err := o.optStrings(path, "subagentRunId"); err != nil {
		return m, err
	}
	if _, err := o.optObject("metadata", path); err != nil {
		return m, err
	}
	content := o["content"]
	switch m.Role {
	case RoleDeveloper, RoleSystem:
		err = o.optStrings(path, "name", "encryptedValue")
		if err == nil {
			_, err = o.str("content", path)
		}
	case RoleReasoning:
		err = o.optStrings(path, "encryptedValue")
		if err == nil {
			_, err = o.str("content", path)
		}
	case RoleAssistant:
		err = o.optStrings(path, "name", "encryptedValue", "content")
		if err == nil {
			err = checkToolCalls(o, path)
		}
		if absent(content) {
			content = nil
		}
	case RoleUser:
		err = o.optStrings(path, "name", "encryptedValue")
		if err == nil {
			err = checkContent(o, path)
		}
	case RoleTool:
		err = o.optStrings(path, "encryptedValue", "error")
		if err == nil {
			_, err = o.id("toolCallId", path)
		}
		if err == nil {
			err = checkContent(o, path)
		}
	case RoleActivity:
		if _, err = o.str("activityType", path); err == nil {
			if _, ok := o["content"]; !ok {
				err = invalid(path+"content", "is required")
			} else {
				_, err = decodeObject(content, path+"content")
			}
		}
	default:
		err = invalid(path+"role", "is not an AG-UI 1.0 message role")
	}
	if err != nil {
		return m, err
	}
	m.Content = content
	return m, nil
}

// checkContent: a user or tool message's content is a string or a list of
// objects that each carry a string "type". What the parts mean is checked
// later, where specific RUN_ERROR messages are produced.
func checkContent(o object, path string) error {
	raw, ok := o["content"]
	if !ok {
		return invalid(path+"content", "is required")
	}
	switch kind(raw) {
	case '"':
		_, err := decodeString(raw, path+"content")
		return err
	case '[':
		parts, err := decodeArray(raw, path+"content")
		if err != nil {
			return err
		}
		for i, p := range parts {
			pp := fmt.Sprintf("%scontent[%d]", path, i)
			po, err := decodeObject(p, pp)
			if err != nil {
				return err
			}
			if _, err := po.str("type", pp+"."); err != nil {
				return err
			}
		}
		return nil
	}
	return invalid(path+"content", "must be a string or an array of content parts")
}

// checkToolCalls: toolCalls?: [{id, type: "function", function: {name,
// arguments: string}, encryptedValue?, metadata?}].
func checkToolCalls(o object, path string) error {
	if absent(o["toolCalls"]) {
		return nil
	}
	calls, err := decodeArray(o["toolCalls"], path+"toolCalls")
	if err != nil {
		return err
	}
	for i, c := range calls {
		cp := fmt.Sprintf("%stoolCalls[%d]", path, i)
		co, err := decodeObject(c, cp)
		if err != nil {
			return err
		}
		cp += "."
		if _, err := co.id("id", cp); err != nil {
			return err
		}
		typ, err := co.str("type", cp)
		if err != nil {
			return err
		}
		if typ != "function" {
			return invalid(cp+"type", `must be "function"`)
		}
		if err := co.optStrings(cp, "encryptedValue"); err != nil {
			return err
		}
		if _, err := co.optObject("metadata", cp); err != nil {
			return err
		}
		fn, ok := co["function"]
		if !ok {
			return invalid(cp+"function", "is required")
		}
		fo, err := decodeObject(fn, cp+"function")
		if err != nil {
			return err
		}
		if _, err := fo.str("name", cp+"function."); err != nil {
			return err
		}
		if _, err := fo.str("arguments", cp+"function."); err != nil {
			return err
		}
	}
	return nil
}
