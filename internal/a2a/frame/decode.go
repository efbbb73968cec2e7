package frame

import (
	"bytes"
	"errors"
)

// Frame decoding: one JSON-RPC response straight into an Event with the
// hand-written scanner (jsonscan.go). The SDK types cost about 40 µs a
// frame and encoding/json several µs (dependencies.md §0.1).

// wireObject holds the union of the fields of Task,
// TaskStatusUpdateEvent and TaskArtifactUpdateEvent that the adapter reads.
type wireObject struct {
	ID        string
	TaskID    string
	ContextID string
	Status    *Status
	History   []Message
	Artifact  map[string]any
	Artifacts []map[string]any
	Metadata  map[string]any
}

// Decode decodes one frame on its own. Exactly one of the results is
// set: the Event of a result member, the RPCError of an error member (which
// wins when a frame has both), or an error saying why b is not a valid
// frame: not one JSON object, neither member (or only null ones), or a
// member of the wrong JSON type where the A2A schema names one. Members the
// schema does not name are skipped but must be valid JSON.
func Decode(b []byte) (*Event, *RPCError, error) {
	var s scanner
	return s.decode(b)
}

// Decoder decodes the frames of one stream. It keeps what consecutive
// frames repeat (strings, metadata, the last text-delta frame as a
// template), which makes a text delta cost a fraction of a fresh decode;
// its answers are always those of Decode. The zero value is ready; a
// Decoder is not for concurrent use.
type Decoder struct {
	s scanner
}

// Decode decodes the next frame of the stream, as the function Decode.
func (d *Decoder) Decode(b []byte) (*Event, *RPCError, error) {
	if d.s.intern == nil {
		d.s.intern = make(map[string]string, 32)
	}
	return d.s.decode(b)
}

// decode reads one JSON-RPC response. The result is the A2A 1.0
// StreamResponse wrapper or, as the original's test doubles and
// GetTask/CancelTask answer, the object's own fields (protocol.md §4.6).
// Like Python's json, the last of repeated members wins whole, and null
// reads as absent.
func (s *scanner) decode(b []byte) (*Event, *RPCError, error) {
	stream := s.intern != nil
	if stream {
		if ev, ok := s.fromTemplate(b); ok {
			return ev, nil, nil
		}
	}
	s.b, s.i, s.depth, s.blk, s.text = b, 0, 0, nil, textSpan{}
	var (
		ev     *Event
		rpcErr *RPCError
	)
	k, ok, err := s.firstMember()
	for ok {
		switch string(k) {
		case "result":
			ev = nil
			if !s.null() {
				ev, err = s.result()
			}
		case "error":
			rpcErr = nil
			if !s.null() {
				rpcErr, err = s.rpcError()
			}
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
		k, ok, err = s.nextMember()
	}
	s.blk = nil // the Event now owns the block
	if err == nil && s.peek() != 0 {
		err = s.fail("data after the response")
	}
	switch {
	case err != nil:
		return nil, nil, errors.New("undecodable JSON-RPC response: " + err.Error())
	case rpcErr != nil:
		return nil, rpcErr, nil
	case ev == nil:
		return nil, nil, errors.New("JSON-RPC response with neither result nor error")
	}
	if stream {
		s.keepTemplate(b, ev)
	}
	return ev, nil, nil
}

func (s *scanner) rpcError() (*RPCError, error) {
	e := &RPCError{}
	k, ok, err := s.firstMember()
	for ok {
		switch string(k) {
		case "code":
			e.Code = 0
			if !s.null() {
				var f float64
				if f, err = s.number(); err == nil {
					var isInt bool
					if e.Code, isInt = intCode(f); !isInt {
						return e, s.fail("non-integral error code")
					}
				}
			}
		case "message":
			e.Message, err = s.str()
		case "data":
			e.Data, err = s.value()
		default:
			err = s.skip()
		}
		if err != nil {
			return e, err
		}
		k, ok, err = s.nextMember()
	}
	return e, err
}

// intCode reads an error code: an integral number (3, 3.0 or 3e0, as
// protobuf and Python readers take it) that is exact in a float64 and
// fits an int.
func intCode(f float64) (int, bool) {
	if f > 1<<53 || f < -(1<<53) || f != float64(int64(f)) || int64(f) != int64(int(int64(f))) {
		return 0, false
	}
	return int(f), true
}

// Wrapper members of a StreamResponse, in the order in which the first
// present one is the event (protocol.md §4.6), whatever the key order.
var wrapperKinds = [...]Kind{KindTask, KindStatusUpdate, KindArtifactUpdate}

func (s *scanner) result() (*Event, error) {
	var (
		bare wireObject
		wrap [len(wrapperKinds)]*Event
		msg  *Message
	)
	k, ok, err := s.firstMember()
	for ok {
		w := -1
		switch string(k) {
		case "task":
			w = 0
		case "statusUpdate":
			w = 1
		case "artifactUpdate":
			w = 2
		case "message":
			msg, err = s.message()
		default:
			err = s.objectField(&bare, k)
		}
		if w >= 0 {
			// A repeated wrapper replaces the earlier one whole.
			wrap[w] = nil
			if !s.null() {
				var o wireObject
				if err = s.wireObject(&o); err == nil {
					wrap[w] = s.event(&o, wrapperKinds[w])
				}
			}
		}
		if err != nil {
			return nil, err
		}
		k, ok, err = s.nextMember()
	}
	if err != nil {
		return nil, err
	}
	for _, ev := range wrap {
		if ev != nil {
			return ev, nil
		}
	}
	if msg != nil {
		ev := s.newEvent()
		ev.Kind, ev.TaskID, ev.ContextID, ev.Message, ev.Metadata = KindMessage, msg.TaskID, msg.ContextID, msg, msg.Metadata
		return ev, nil
	}
	// Bare shape: a Task carries "id", an update "taskId".
	kind := KindStatusUpdate
	switch {
	case bare.Artifact != nil:
		kind = KindArtifactUpdate
	case bare.TaskID == "" && bare.ID != "":
		kind = KindTask
	}
	return s.event(&bare, kind), nil
}

// wireObject reads a task or update object into o.
func (s *scanner) wireObject(o *wireObject) error {
	k, ok, err := s.firstMember()
	for ok {
		if err = s.objectField(o, k); err != nil {
			return err
		}
		k, ok, err = s.nextMember()
	}
	return err
}

func (s *scanner) objectField(o *wireObject, k []byte) error {
	var err error
	switch string(k) {
	case "id":
		o.ID, err = s.id(slotTask)
	case "taskId":
		o.TaskID, err = s.id(slotTask)
	case "contextId":
		o.ContextID, err = s.id(slotContext)
	case "status":
		o.Status, err = s.status()
	case "history":
		if s.null() {
			o.History = nil
			return nil
		}
		o.History = append([]Message{}, o.History[:0]...)
		var ok bool
		ok, err = s.firstElem()
		for ok && err == nil {
			// Like encoding/json, a null element is a zero Message.
			o.History = append(o.History, Message{})
			if err = s.messageInto(&o.History[len(o.History)-1], nil); err == nil {
				ok, err = s.nextElem()
			}
		}
	case "artifact":
		o.Artifact, err = s.objectValue()
	case "artifacts":
		if s.null() {
			o.Artifacts = nil
			return nil
		}
		o.Artifacts = append([]map[string]any{}, o.Artifacts[:0]...)
		var ok bool
		ok, err = s.firstElem()
		for ok && err == nil {
			var m map[string]any
			if m, err = s.objectValue(); err == nil {
				o.Artifacts = append(o.Artifacts, m)
				ok, err = s.nextElem()
			}
		}
	case "metadata":
		o.Metadata, err = s.metaValue()
	default:
		err = s.skip()
	}
	return err
}

// metaValue reuses the previous frame's metadata map when the bytes match.
// A memoised object ends at its own closing brace, so a prefix match is a
// whole-value match and the bytes need not be scanned.
func (s *scanner) metaValue() (map[string]any, error) {
	if s.intern == nil {
		return s.objectValue()
	}
	if s.peek() == '{' && s.lastMetaMap != nil && bytes.HasPrefix(s.b[s.i:], s.lastMeta) {
		s.i += len(s.lastMeta)
		return s.lastMetaMap, nil
	}
	start := s.i
	m, err := s.objectValue()
	if err == nil && m != nil && s.i-start <= 256 {
		s.lastMeta = append(s.lastMeta[:0], s.b[start:s.i]...)
		s.lastMetaMap = m
	}
	return m, err
}

func (s *scanner) event(o *wireObject, kind Kind) *Event {
	id := o.TaskID
	if id == "" {
		id = o.ID
	}
	// Field by field into the zeroed event: a struct copy would take the
	// bulk write-barrier path while the GC runs.
	ev := s.newEvent()
	ev.Kind, ev.TaskID, ev.ContextID, ev.Status = kind, id, o.ContextID, o.Status
	ev.History, ev.Artifact, ev.Artifacts, ev.Metadata = o.History, o.Artifact, o.Artifacts, o.Metadata
	return ev
}

// objectValue reads an object (or null) as map[string]any.
func (s *scanner) objectValue() (map[string]any, error) {
	if s.null() {
		return nil, nil
	}
	if s.peek() != '{' {
		return nil, s.fail("expected object")
	}
	v, err := s.value()
	m, _ := v.(map[string]any)
	return m, err
}
