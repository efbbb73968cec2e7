package frame

// Text-delta frames of one stream repeat every byte but the text: same
// task, context, message id, state, role and metadata. The scanner keeps
// the last such frame as a template (its bytes before and after the text
// string, and its decoded values), and a frame that matches the template
// around a new text string is answered by copying the template's values,
// skipping the full decode.
//
// This is exact: equal bytes before the string leave the parser in the
// same state, the string token ends at its first unescaped quote whatever
// its contents, and equal bytes after it decode to the same values. Only
// events whose values can be copied safely become templates (no history,
// artifacts or per-message maps; Event.Metadata is read-only and shared,
// as it already is between frames with identical metadata bytes).

// maxTemplateBytes bounds the template's stored bytes (text excluded).
const maxTemplateBytes = 4096

type frameTemplate struct {
	ok    bool
	bytes []byte // the frame without its text string
	split int    // where the text string started
	blk   frameBlock
}

// textSpan records where the frame's text strings were read.
type textSpan struct {
	n          int // text members read in the frame
	parts      int // parts read in the frame, in any message
	start, end int // the last one's value bytes
	part       *Part
}

// fromTemplate decodes b from the template when b matches it.
func (s *scanner) fromTemplate(b []byte) (*Event, bool) {
	t := &s.tmpl
	if !t.ok || len(b) <= t.split || string(b[:t.split]) != string(t.bytes[:t.split]) || b[t.split] != '"' {
		return nil, false
	}
	s.b, s.i, s.depth = b, t.split, 0
	start := s.i + 1
	var text string
	if end := plainEnd(b, start); end < len(b) && b[end] == '"' {
		text, s.i = string(b[start:end]), end+1
	} else {
		s.i = end
		d, err := s.slowString(start)
		if err != nil {
			return nil, false // the full decode reports it
		}
		text = string(d)
	}
	if string(b[s.i:]) != string(t.bytes[t.split:]) {
		return nil, false
	}
	return t.copyWith(text), true
}

// copyWith returns a copy of a template event with its one part's text
// replaced. The fields are set one by one: a template holds no history,
// artifacts, part data or maps other than Event.Metadata, and a struct
// copy would take the bulk write-barrier path while the GC runs.
func (tm *frameTemplate) copyWith(text string) *Event {
	b := &frameBlock{}
	t := &tm.blk
	ev, st, m, p := &b.ev, &b.st, &b.m, &b.p[0]
	ev.Kind, ev.TaskID, ev.ContextID, ev.Status, ev.Metadata = t.ev.Kind, t.ev.TaskID, t.ev.ContextID, st, t.ev.Metadata
	st.State, st.Message, st.Timestamp = t.st.State, m, t.st.Timestamp
	m.MessageID, m.ContextID, m.TaskID, m.Role, m.Parts = t.m.MessageID, t.m.ContextID, t.m.TaskID, t.m.Role, b.p[:1]
	tp := &t.p[0]
	p.Text, p.Raw, p.URL, p.MediaType, p.Filename = text, tp.Raw, tp.URL, tp.MediaType, tp.Filename
	return ev
}

// keepTemplate makes the frame just decoded into ev the template when
// its values can be copied.
func (s *scanner) keepTemplate(b []byte, ev *Event) {
	tx := &s.text
	// With one part and one text member in the whole frame, the text
	// bytes are exactly the event's only part's text, whatever repeated
	// keys the frame had.
	if tx.n != 1 || tx.parts != 1 || ev.Status == nil || ev.Status.Message == nil || ev.Message != nil ||
		ev.History != nil || ev.Artifact != nil || ev.Artifacts != nil {
		return
	}
	m := ev.Status.Message
	if len(m.Parts) != 1 || &m.Parts[0] != tx.part || m.Metadata != nil ||
		m.Parts[0].Data != nil || m.Parts[0].Metadata != nil {
		return
	}
	if len(b)-(tx.end-tx.start) > maxTemplateBytes {
		return
	}
	t := &s.tmpl
	t.bytes = append(append(t.bytes[:0], b[:tx.start]...), b[tx.end:]...)
	t.split = tx.start
	t.blk = frameBlock{ev: *ev, st: *ev.Status, m: *m, p: [1]Part{m.Parts[0]}}
	// copyWith rebuilds the links; do not keep the caller's objects alive.
	t.blk.ev.Status, t.blk.st.Message, t.blk.m.Parts = nil, nil, nil
	t.ok = true
}
