package a2a

import "bytes"

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

// decodeFrame decodes one JSON-RPC response into an Event. isErrEvent is
// true for SSE frames with "event: error". The result is the A2A 1.0
// StreamResponse wrapper or, as the original's test doubles and
// GetTask/CancelTask answer, the object's own fields (protocol.md §4.6).
func decodeFrame(b []byte, isErrEvent bool) (*Event, error) {
	return decodeFrameWith(&scanner{}, b, isErrEvent)
}

// decodeFrameWith reuses s (and its intern table) for another frame.
func decodeFrameWith(s *scanner, b []byte, isErrEvent bool) (*Event, error) {
	stream := s.intern != nil && !isErrEvent
	if stream {
		if ev, ok := s.fromTemplate(b); ok {
			return ev, nil
		}
	}
	s.b, s.i, s.depth, s.blk, s.text = b, 0, 0, nil, textSpan{}
	var (
		ev        *Event
		rpcErr    *RPCError
		hasResult bool
	)
	k, ok, err := s.firstMember()
	for ok {
		switch string(k) {
		case "result":
			if !s.null() {
				hasResult = true
				ev, err = s.result()
			}
		case "error":
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
	if err != nil {
		return nil, protocolError("undecodable JSON-RPC response: %s", err.Error())
	}
	if rpcErr != nil {
		return nil, rpcErr
	}
	if isErrEvent {
		return nil, protocolError("error event without a JSON-RPC error")
	}
	if !hasResult {
		return nil, protocolError("JSON-RPC response with neither result nor error")
	}
	if stream && ev != nil {
		s.keepTemplate(b, ev)
	}
	return ev, nil
}

func (s *scanner) rpcError() (*RPCError, error) {
	e := &RPCError{}
	k, ok, err := s.firstMember()
	for ok {
		switch string(k) {
		case "code":
			var f float64
			if f, err = s.number(); err == nil {
				n, isInt := Int(f)
				if !isInt || n != int64(int(n)) {
					return e, s.fail("non-integral error code")
				}
				e.Code = int(n)
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

func (s *scanner) result() (*Event, error) {
	var (
		bare   wireObject
		ev     *Event
		hasMsg bool
	)
	k, ok, err := s.firstMember()
	for ok {
		var kind Kind
		switch string(k) {
		case "task":
			kind = KindTask
		case "statusUpdate":
			kind = KindStatusUpdate
		case "artifactUpdate":
			kind = KindArtifactUpdate
		case "message":
			if !s.null() {
				var m *Message
				if m, err = s.message(); err == nil && ev == nil {
					ev = s.newEvent()
					*ev = Event{Kind: KindMessage, TaskID: m.TaskID, ContextID: m.ContextID, Message: m, Metadata: m.Metadata}
					hasMsg = true
				}
			}
		default:
			err = s.objectField(&bare, k)
		}
		if kind != "" && !s.null() {
			var o wireObject
			// The first wrapper member wins, in the order task,
			// statusUpdate, artifactUpdate, message (protocol.md §4.6),
			// whatever the key order.
			if err = s.wireObject(&o); err == nil && (ev == nil || hasMsg || kindRank(kind) < kindRank(ev.Kind)) {
				ev, hasMsg = s.event(&o, kind), false
			}
		}
		if err != nil {
			return nil, err
		}
		k, ok, err = s.nextMember()
	}
	if err != nil || ev != nil {
		return ev, err
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

func kindRank(k Kind) int {
	switch k {
	case KindTask:
		return 0
	case KindStatusUpdate:
		return 1
	case KindArtifactUpdate:
		return 2
	}
	return 3
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
