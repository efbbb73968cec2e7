package frame

// frameBlock backs, in one allocation, what a text-delta frame needs: the
// Event, its Status and the status message with one part. Each piece is
// handed out once per frame; later ones are allocated on their own.
type frameBlock struct {
	ev             Event
	st             Status
	m              Message
	p              [1]Part
	evUsed, stUsed bool
}

func (s *scanner) block() *frameBlock {
	if s.blk == nil {
		s.blk = &frameBlock{}
	}
	return s.blk
}

func (s *scanner) newEvent() *Event {
	if b := s.block(); !b.evUsed {
		b.evUsed = true
		return &b.ev
	}
	return &Event{}
}

// statusBlock is the storage of a Status that the frame block cannot give.
type statusBlock struct {
	st Status
	m  Message
	p  [1]Part
}

func (s *scanner) status() (*Status, error) {
	if s.null() {
		return nil, nil
	}
	var (
		st      *Status
		msg     *Message
		spare   []Part
		msgUsed bool
	)
	if b := s.block(); !b.stUsed {
		b.stUsed = true
		st, msg, spare = &b.st, &b.m, b.p[:0]
	} else {
		sb := &statusBlock{}
		st, msg, spare = &sb.st, &sb.m, sb.p[:0]
	}
	k, ok, err := s.firstMember()
	for ok {
		switch string(k) {
		case "state":
			st.State, err = s.id(slotState)
		case "message":
			if s.null() {
				st.Message = nil
				break
			}
			if msgUsed {
				*msg = Message{} // a repeated "message" key starts afresh
			}
			st.Message, msgUsed = msg, true
			err = s.messageInto(msg, spare)
		case "timestamp":
			st.Timestamp, err = s.str()
		default:
			err = s.skip()
		}
		if err != nil {
			return st, err
		}
		k, ok, err = s.nextMember()
	}
	return st, err
}

func (s *scanner) message() (*Message, error) {
	if s.null() {
		return nil, nil
	}
	m := &Message{}
	return m, s.messageInto(m, nil)
}

// messageInto decodes a message (null leaves m alone) into m; spare, when
// not nil, backs the parts slice so a one-part message needs no extra
// allocation.
func (s *scanner) messageInto(m *Message, spare []Part) error {
	k, ok, err := s.firstMember()
	for ok {
		switch string(k) {
		case "messageId":
			m.MessageID, err = s.id(slotMessage)
		case "contextId":
			m.ContextID, err = s.id(slotContext)
		case "taskId":
			m.TaskID, err = s.id(slotTask)
		case "role":
			m.Role, err = s.id(slotRole)
		case "parts":
			err = s.parts(m, spare)
		case "metadata":
			m.Metadata, err = s.objectValue()
		default:
			err = s.skip()
		}
		if err != nil {
			return err
		}
		k, ok, err = s.nextMember()
	}
	return err
}

func (s *scanner) parts(m *Message, spare []Part) error {
	// Like encoding/json: null gives nil, [] an empty slice.
	if s.null() {
		m.Parts = nil
		return nil
	}
	if m.Parts = spare; m.Parts == nil {
		m.Parts = []Part{}
	}
	ok, err := s.firstElem()
	for ok {
		m.Parts = append(m.Parts, Part{})
		s.text.parts++
		if err = s.part(&m.Parts[len(m.Parts)-1]); err != nil {
			return err
		}
		ok, err = s.nextElem()
	}
	return err
}

func (s *scanner) part(p *Part) error {
	k, ok, err := s.firstMember()
	for ok {
		switch string(k) {
		case "text":
			s.peek()
			start := s.i
			if p.Text, err = s.str(); err == nil {
				s.text.n++
				s.text.start, s.text.end, s.text.part = start, s.i, p
			}
		case "raw":
			p.Raw, err = s.str()
		case "url":
			p.URL, err = s.str()
		case "data":
			p.Data, err = s.raw()
		case "mediaType":
			p.MediaType, err = s.id(slotMedia)
		case "filename":
			p.Filename, err = s.str()
		case "metadata":
			p.Metadata, err = s.objectValue()
		default:
			err = s.skip()
		}
		if err != nil {
			return err
		}
		k, ok, err = s.nextMember()
	}
	return err
}
