package frame

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// refDecode is the reference decoder the scanner is held to: encoding/json
// reads all the JSON (grammar, nesting limit, strings, numbers, raw bytes)
// and refDecode only applies the frame schema. It defines what Decode must
// answer:
//
//   - A valid frame is one JSON value (json.Valid: encoding/json's grammar,
//     its nesting limit of 10000, invalid UTF-8 read as U+FFFD) that is an
//     object with a non-null "result" or "error" member. Anything else is
//     rejected.
//   - Keys match exactly (proto JSON), not case-insensitively as
//     encoding/json's struct decoding does; so objects are read as ordered
//     members, not into structs.
//   - A repeated member replaces the earlier one whole, as in Python's
//     json (encoding/json's struct decoding would merge repeated objects),
//     but every occurrence must have the type the schema names: null, or
//     the type below. Null reads as absent.
//   - Schema: strings for ids, state, role, timestamp, text, raw, url,
//     mediaType, filename and error.message; objects for result, error,
//     task, statusUpdate, artifactUpdate, status, message, every metadata
//     and artifact; arrays of objects (or nulls) for history, artifacts and
//     parts; error.code a number that is integral (3, 3.0, 3e0), exact in a
//     float64 and fits an int; error.data any value, part data any value
//     kept as its bytes. Members the schema does not name are only
//     syntax-checked.
//   - When a frame has both, error wins; both are still checked.
func refDecode(b []byte) (*Event, *RPCError, error) {
	if !json.Valid(b) {
		return nil, nil, errors.New("not JSON")
	}
	var d refDecoder
	var (
		ev     *Event
		rpcErr *RPCError
	)
	for _, m := range d.members(b) {
		switch m.key {
		case "result":
			ev = nil
			if !isNull(m.raw) {
				ev = d.result(m.raw)
			}
		case "error":
			rpcErr = nil
			if !isNull(m.raw) {
				rpcErr = d.rpcError(m.raw)
			}
		}
	}
	switch {
	case d.err != nil:
		return nil, nil, d.err
	case rpcErr != nil:
		return nil, rpcErr, nil
	case ev == nil:
		return nil, nil, errors.New("neither result nor error")
	}
	return ev, nil, nil
}

type refMember struct {
	key string
	raw json.RawMessage
}

// refDecoder keeps the first error; after one, its answers do not matter.
type refDecoder struct{ err error }

func isNull(raw []byte) bool { return string(raw) == "null" }

func (d *refDecoder) fail(err error) {
	if d.err == nil && err != nil {
		d.err = err
	}
}

// members reads an object (null has none) as its members in order,
// repeated keys included.
func (d *refDecoder) members(raw []byte) []refMember {
	if isNull(raw) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		d.fail(fmt.Errorf("not an object: %.20q", raw))
		return nil
	}
	var out []refMember
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			d.fail(err)
			return nil
		}
		m := refMember{key: t.(string)}
		if err := dec.Decode(&m.raw); err != nil {
			d.fail(err)
			return nil
		}
		out = append(out, m)
	}
	return out
}

// into decodes raw with encoding/json; null leaves v alone.
func (d *refDecoder) into(raw []byte, v any) {
	d.fail(json.Unmarshal(raw, v))
}

func (d *refDecoder) str(raw []byte) (s string) {
	d.into(raw, &s)
	return s
}

func (d *refDecoder) object(raw []byte) (m map[string]any) {
	d.into(raw, &m)
	return m
}

// array reads an array: nil for null, non-nil when empty.
func (d *refDecoder) array(raw []byte) (a []json.RawMessage) {
	d.into(raw, &a)
	return a
}

func (d *refDecoder) rpcError(raw []byte) *RPCError {
	e := &RPCError{}
	for _, m := range d.members(raw) {
		switch m.key {
		case "code":
			var f float64
			d.into(m.raw, &f)
			n := int64(f)
			if f != float64(n) || f > 1<<53 || f < -(1<<53) || n != int64(int(n)) {
				d.fail(errors.New("non-integral code"))
			}
			e.Code = int(n)
		case "message":
			e.Message = d.str(m.raw)
		case "data":
			e.Data = nil
			d.into(m.raw, &e.Data)
		}
	}
	return e
}

// refWire is the union of the members of Task, TaskStatusUpdateEvent and
// TaskArtifactUpdateEvent that an Event keeps.
type refWire struct {
	id, taskID, contextID string
	status                *Status
	history               []Message
	artifact              map[string]any
	artifacts             []map[string]any
	metadata              map[string]any
}

// field reads one member of a task or update; false when the schema does
// not name it.
func (d *refDecoder) field(o *refWire, m refMember) bool {
	switch m.key {
	case "id":
		o.id = d.str(m.raw)
	case "taskId":
		o.taskID = d.str(m.raw)
	case "contextId":
		o.contextID = d.str(m.raw)
	case "status":
		o.status = nil
		if !isNull(m.raw) {
			o.status = d.status(m.raw)
		}
	case "history":
		o.history = nil
		if a := d.array(m.raw); a != nil {
			o.history = []Message{}
			for _, e := range a {
				o.history = append(o.history, d.message(e))
			}
		}
	case "artifact":
		o.artifact = d.object(m.raw)
	case "artifacts":
		o.artifacts = nil
		if a := d.array(m.raw); a != nil {
			o.artifacts = []map[string]any{}
			for _, e := range a {
				o.artifacts = append(o.artifacts, d.object(e))
			}
		}
	case "metadata":
		o.metadata = d.object(m.raw)
	default:
		return false
	}
	return true
}

func (o *refWire) event(k Kind) *Event {
	id := o.taskID
	if id == "" {
		id = o.id
	}
	return &Event{Kind: k, TaskID: id, ContextID: o.contextID, Status: o.status, History: o.history,
		Artifact: o.artifact, Artifacts: o.artifacts, Metadata: o.metadata}
}

func (d *refDecoder) result(raw []byte) *Event {
	var (
		bare refWire
		wrap = map[Kind]*refWire{}
		msg  *Message
	)
	for _, m := range d.members(raw) {
		switch k := Kind(m.key); k {
		case KindTask, KindStatusUpdate, KindArtifactUpdate:
			delete(wrap, k)
			if !isNull(m.raw) {
				o := &refWire{}
				for _, f := range d.members(m.raw) {
					d.field(o, f)
				}
				wrap[k] = o
			}
		case KindMessage:
			msg = nil
			if !isNull(m.raw) {
				mm := d.message(m.raw)
				msg = &mm
			}
		default:
			d.field(&bare, m)
		}
	}
	for _, k := range []Kind{KindTask, KindStatusUpdate, KindArtifactUpdate} {
		if o := wrap[k]; o != nil {
			return o.event(k)
		}
	}
	if msg != nil {
		return &Event{Kind: KindMessage, TaskID: msg.TaskID, ContextID: msg.ContextID, Message: msg, Metadata: msg.Metadata}
	}
	k := KindStatusUpdate
	if bare.artifact != nil {
		k = KindArtifactUpdate
	} else if bare.taskID == "" && bare.id != "" {
		k = KindTask
	}
	return bare.event(k)
}

func (d *refDecoder) status(raw []byte) *Status {
	st := &Status{}
	for _, m := range d.members(raw) {
		switch m.key {
		case "state":
			st.State = d.str(m.raw)
		case "message":
			st.Message = nil
			if !isNull(m.raw) {
				mm := d.message(m.raw)
				st.Message = &mm
			}
		case "timestamp":
			st.Timestamp = d.str(m.raw)
		}
	}
	return st
}

// message reads a message; null is the zero Message, as encoding/json
// reads a null array element.
func (d *refDecoder) message(raw []byte) Message {
	var msg Message
	for _, m := range d.members(raw) {
		switch m.key {
		case "messageId":
			msg.MessageID = d.str(m.raw)
		case "contextId":
			msg.ContextID = d.str(m.raw)
		case "taskId":
			msg.TaskID = d.str(m.raw)
		case "role":
			msg.Role = d.str(m.raw)
		case "parts":
			msg.Parts = nil
			if a := d.array(m.raw); a != nil {
				msg.Parts = []Part{}
				for _, e := range a {
					msg.Parts = append(msg.Parts, d.part(e))
				}
			}
		case "metadata":
			msg.Metadata = d.object(m.raw)
		}
	}
	return msg
}

func (d *refDecoder) part(raw []byte) Part {
	var p Part
	for _, m := range d.members(raw) {
		switch m.key {
		case "text":
			p.Text = d.str(m.raw)
		case "raw":
			p.Raw = d.str(m.raw)
		case "url":
			p.URL = d.str(m.raw)
		case "data":
			p.Data = append(json.RawMessage(nil), m.raw...)
		case "mediaType":
			p.MediaType = d.str(m.raw)
		case "filename":
			p.Filename = d.str(m.raw)
		case "metadata":
			p.Metadata = d.object(m.raw)
		}
	}
	return p
}
