package a2a

// Frame decoding: one JSON-RPC response straight into an Event with the
// hand-written scanner (jsonscan.go). The SDK types cost about 40 µs a
// frame and encoding/json several µs (libraries.md §0.1).

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
// GetTask/CancelTask answer, the object's own fields (adapter.md §4.6).
func decodeFrame(b []byte, isErrEvent bool) (*Event, error) {
	return decodeFrameWith(&scanner{}, b, isErrEvent)
}

// decodeFrameWith reuses s (and its intern table) for another frame.
func decodeFrameWith(s *scanner, b []byte, isErrEvent bool) (*Event, error) {
	s.b, s.i, s.depth = b, 0, 0
	var (
		ev        *Event
		rpcErr    *RPCError
		hasResult bool
	)
	err := s.object(func(k []byte) error {
		switch string(k) {
		case "result":
			if s.null() {
				return nil
			}
			hasResult = true
			var err error
			ev, err = s.result()
			return err
		case "error":
			if s.null() {
				return nil
			}
			var err error
			rpcErr, err = s.rpcError()
			return err
		}
		return s.skip()
	})
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
	return ev, nil
}

func (s *scanner) rpcError() (*RPCError, error) {
	e := &RPCError{}
	err := s.object(func(k []byte) error {
		var err error
		switch string(k) {
		case "code":
			var f float64
			if f, err = s.number(); err == nil {
				n, ok := Int(f)
				if !ok || n != int64(int(n)) {
					return s.fail("non-integral error code")
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
		return err
	})
	return e, err
}

func (s *scanner) result() (*Event, error) {
	var (
		bare   wireObject
		ev     *Event
		hasMsg bool
	)
	err := s.object(func(k []byte) error {
		var kind Kind
		switch string(k) {
		case "task":
			kind = KindTask
		case "statusUpdate":
			kind = KindStatusUpdate
		case "artifactUpdate":
			kind = KindArtifactUpdate
		case "message":
			if s.null() {
				return nil
			}
			m, err := s.message()
			if err == nil && ev == nil {
				ev = &Event{Kind: KindMessage, TaskID: m.TaskID, ContextID: m.ContextID, Message: m, Metadata: m.Metadata}
				hasMsg = true
			}
			return err
		default:
			return s.objectField(&bare, k)
		}
		if s.null() {
			return nil
		}
		var o wireObject
		if err := s.object(func(k []byte) error { return s.objectField(&o, k) }); err != nil {
			return err
		}
		// The first wrapper member wins, in the order task, statusUpdate,
		// artifactUpdate, message (adapter.md §4.6), whatever the key order.
		if ev == nil || hasMsg || kindRank(kind) < kindRank(ev.Kind) {
			ev, hasMsg = o.event(kind), false
		}
		return nil
	})
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
	return bare.event(kind), nil
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

func (s *scanner) objectField(o *wireObject, k []byte) error {
	var err error
	switch string(k) {
	case "id":
		o.ID, err = s.id()
	case "taskId":
		o.TaskID, err = s.id()
	case "contextId":
		o.ContextID, err = s.id()
	case "status":
		o.Status, err = s.status()
	case "history":
		if s.null() {
			o.History = nil
			return nil
		}
		o.History = append([]Message{}, o.History[:0]...)
		err = s.array(func() error {
			m, err := s.message()
			if m != nil {
				o.History = append(o.History, *m)
			}
			return err
		})
	case "artifact":
		o.Artifact, err = s.objectValue()
	case "artifacts":
		if s.null() {
			o.Artifacts = nil
			return nil
		}
		o.Artifacts = append([]map[string]any{}, o.Artifacts[:0]...)
		err = s.array(func() error {
			m, err := s.objectValue()
			o.Artifacts = append(o.Artifacts, m)
			return err
		})
	case "metadata":
		o.Metadata, err = s.metaValue()
	default:
		err = s.skip()
	}
	return err
}

// metaValue reuses the previous frame's metadata map when the bytes match.
func (s *scanner) metaValue() (map[string]any, error) {
	if s.intern == nil {
		return s.objectValue()
	}
	s.ws()
	start := s.i
	if err := s.skip(); err != nil {
		return nil, err
	}
	raw := s.b[start:s.i]
	if s.lastMetaMap != nil && string(raw) == string(s.lastMeta) {
		return s.lastMetaMap, nil
	}
	s.i = start
	m, err := s.objectValue()
	if err == nil && len(raw) <= 256 {
		s.lastMeta = append(s.lastMeta[:0], raw...)
		s.lastMetaMap = m
	}
	return m, err
}

func (o *wireObject) event(kind Kind) *Event {
	id := o.TaskID
	if id == "" {
		id = o.ID
	}
	return &Event{Kind: kind, TaskID: id, ContextID: o.ContextID, Status: o.Status, History: o.History,
		Artifact: o.Artifact, Artifacts: o.Artifacts, Metadata: o.Metadata}
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

func (s *scanner) status() (*Status, error) {
	if s.null() {
		return nil, nil
	}
	// One allocation for the common status with a one-part message.
	blk := &struct {
		st Status
		m  Message
		p  [1]Part
	}{}
	st := &blk.st
	err := s.object(func(k []byte) error {
		var err error
		switch string(k) {
		case "state":
			st.State, err = s.id()
		case "message":
			if s.null() {
				st.Message = nil
				return nil
			}
			blk.m = Message{}
			st.Message = &blk.m
			err = s.messageInto(&blk.m, blk.p[:0])
		case "timestamp":
			st.Timestamp, err = s.str()
		default:
			err = s.skip()
		}
		return err
	})
	return st, err
}

func (s *scanner) message() (*Message, error) {
	if s.null() {
		return nil, nil
	}
	m := &Message{}
	return m, s.messageInto(m, nil)
}

// messageInto decodes a message into m; spare, when not nil, backs the
// parts slice so a one-part message needs no extra allocation.
func (s *scanner) messageInto(m *Message, spare []Part) error {
	return s.object(func(k []byte) error {
		var err error
		switch string(k) {
		case "messageId":
			m.MessageID, err = s.id()
		case "contextId":
			m.ContextID, err = s.id()
		case "taskId":
			m.TaskID, err = s.id()
		case "role":
			m.Role, err = s.id()
		case "parts":
			// Like encoding/json: null gives nil, [] an empty slice.
			if s.null() {
				m.Parts = nil
				return nil
			}
			if m.Parts = spare; m.Parts == nil {
				m.Parts = []Part{}
			}
			err = s.array(func() error {
				p, err := s.part()
				m.Parts = append(m.Parts, p)
				return err
			})
		case "metadata":
			m.Metadata, err = s.objectValue()
		default:
			err = s.skip()
		}
		return err
	})
}

func (s *scanner) part() (Part, error) {
	var p Part
	err := s.object(func(k []byte) error {
		var err error
		switch string(k) {
		case "text":
			p.Text, err = s.str()
		case "raw":
			p.Raw, err = s.str()
		case "url":
			p.URL, err = s.str()
		case "data":
			p.Data, err = s.raw()
		case "mediaType":
			p.MediaType, err = s.id()
		case "filename":
			p.Filename, err = s.str()
		case "metadata":
			p.Metadata, err = s.objectValue()
		default:
			err = s.skip()
		}
		return err
	})
	return p, err
}
