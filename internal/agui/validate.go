package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrInvalidEnvelope reports a body that violates the AG-UI 1.0
// RunAgentInput schema or the project's required fields (protocol.md §3.1).
// Errors returned by DecodeRunAgentInput wrap it and name the offending
// path (never its value), so they are safe to log.
var ErrInvalidEnvelope = errors.New("agui: invalid AG-UI RunAgentInput envelope")

// object is one decoded JSON object with its member values kept raw.
type object map[string]json.RawMessage

func invalid(path, rule string) error {
	return &FieldError{Path: path, Reason: rule}
}

// kind returns the first byte of a JSON value ('"', '{', '[', 'n', 't',
// 'f' or a number byte), or 0 for an absent value.
func kind(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// absent reports a missing member or an explicit null; optional members
// treat both the same (the 1.0 client strips optional nulls anyway).
func absent(raw json.RawMessage) bool {
	k := kind(raw)
	return k == 0 || k == 'n'
}

func decodeObject(raw json.RawMessage, path string) (object, error) {
	if kind(raw) != '{' {
		return nil, invalid(path, "must be an object")
	}
	var o object
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, invalid(path, "must be an object")
	}
	return o, nil
}

func decodeArray(raw json.RawMessage, path string) ([]json.RawMessage, error) {
	if kind(raw) != '[' {
		return nil, invalid(path, "must be an array")
	}
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, invalid(path, "must be an array")
	}
	if a == nil {
		a = []json.RawMessage{}
	}
	return a, nil
}

func decodeString(raw json.RawMessage, path string) (string, error) {
	var s string
	if kind(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", invalid(path, "must be a string")
	}
	return s, nil
}

// str reads a required string member.
func (o object) str(key, path string) (string, error) {
	raw, ok := o[key]
	if !ok {
		return "", invalid(path+key, "is required")
	}
	return decodeString(raw, path+key)
}

// optStr reads an optional string member; null counts as absent.
func (o object) optStr(key, path string) (string, error) {
	if absent(o[key]) {
		return "", nil
	}
	return decodeString(o[key], path+key)
}

// optObject checks an optional object member; null counts as absent.
func (o object) optObject(key, path string) (object, error) {
	if absent(o[key]) {
		return nil, nil
	}
	return decodeObject(o[key], path+key)
}

// optStrings checks several optional string members at once.
func (o object) optStrings(path string, keys ...string) error {
	for _, k := range keys {
		if _, err := o.optStr(k, path); err != nil {
			return err
		}
	}
	return nil
}

// DecodeRunAgentInput validates body against the AG-UI 1.0 RunAgentInput
// schema (agui.md §2) plus the project rule that state, tools, context
// and forwardedProps are present (protocol.md §3.1), and decodes it. Unknown
// keys are accepted everywhere. Empty threadId/runId pass (admission
// decides); ids longer than MaxIDLength or with control characters fail. User and tool content parts are checked only for an object
// with a string "type"; part semantics belong to the request package.
func DecodeRunAgentInput(body []byte) (*RunAgentInput, error) {
	top, err := decodeObject(body, "$")
	if err != nil {
		return nil, err
	}
	in := &RunAgentInput{}
	if in.ThreadID, err = top.id("threadId", ""); err != nil {
		return nil, err
	}
	if in.RunID, err = top.id("runId", ""); err != nil {
		return nil, err
	}
	if in.ParentRunID, err = top.optID("parentRunId", ""); err != nil {
		return nil, err
	}
	if in.ProtocolVersion, err = top.optStr("protocolVersion", ""); err != nil {
		return nil, err
	}
	state, ok := top["state"]
	if !ok {
		return nil, invalid("state", "is required")
	}
	in.State = state // any JSON, null included
	fp, ok := top["forwardedProps"]
	if !ok || absent(fp) {
		return nil, invalid("forwardedProps", "is required and must not be null")
	}
	in.ForwardedProps = fp
	if in.Messages, err = decodeMessages(top["messages"]); err != nil {
		return nil, err
	}
	if in.Tools, err = decodeList(top, "tools", checkTool); err != nil {
		return nil, err
	}
	if in.Context, err = decodeList(top, "context", checkContext); err != nil {
		return nil, err
	}
	if !absent(top["resume"]) {
		in.HasResume = true
		if in.Resume, err = decodeResume(top["resume"]); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// decodeList reads a required array member and checks each element.
func decodeList(top object, key string, check func(object, string) error) ([]json.RawMessage, error) {
	raw, ok := top[key]
	if !ok {
		return nil, invalid(key, "is required")
	}
	items, err := decodeArray(raw, key)
	if err != nil {
		return nil, err
	}
	for i, item := range items {
		path := fmt.Sprintf("%s[%d]", key, i)
		o, err := decodeObject(item, path)
		if err != nil {
			return nil, err
		}
		if err := check(o, path+"."); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// checkTool: {name: string, description: string, parameters?: any,
// metadata?: object}.
func checkTool(o object, path string) error {
	if _, err := o.str("name", path); err != nil {
		return err
	}
	if _, err := o.str("description", path); err != nil {
		return err
	}
	_, err := o.optObject("metadata", path)
	return err
}

// checkContext: {description: string, value: string}.
func checkContext(o object, path string) error {
	if _, err := o.str("description", path); err != nil {
		return err
	}
	_, err := o.str("value", path)
	return err
}

func decodeResume(raw json.RawMessage) ([]ResumeEntry, error) {
	items, err := decodeArray(raw, "resume")
	if err != nil {
		return nil, err
	}
	out := make([]ResumeEntry, 0, len(items))
	for i, item := range items {
		path := fmt.Sprintf("resume[%d]", i)
		o, err := decodeObject(item, path)
		if err != nil {
			return nil, err
		}
		path += "."
		var e ResumeEntry
		if e.InterruptID, err = o.id("interruptId", path); err != nil {
			return nil, err
		}
		if e.Status, err = o.str("status", path); err != nil {
			return nil, err
		}
		if e.Status != ResumeResolved && e.Status != ResumeCancelled {
			return nil, invalid(path+"status", `must be "resolved" or "cancelled"`)
		}
		if !absent(o["payload"]) {
			e.Payload = o["payload"]
		}
		if !absent(o["metadata"]) {
			if kind(o["metadata"]) != '{' || json.Unmarshal(o["metadata"], &e.Metadata) != nil {
				return nil, invalid(path+"metadata", "must be an object")
			}
		}
		out = append(out, e)
	}
	return out, nil
}
