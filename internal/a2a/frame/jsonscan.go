package frame

import (
	"errors"
	"strconv"
)

// scanner is a small JSON reader over one frame. The frame decoder uses it
// instead of encoding/json's reflection, which costs several µs and ~35
// allocations per text-delta frame; results match encoding/json's
// untyped decoding (objects map[string]any, arrays []any, numbers
// float64). Keys match exactly (proto JSON), not case-insensitively.
//
// Objects and arrays are walked with loops (firstMember/nextMember,
// firstElem/nextElem) rather than callbacks: the closures cost an indirect
// call and spilled captures per member on the hot path.
type scanner struct {
	b     []byte
	i     int
	depth int
	// intern, when set, shares the strings that repeat across the frames
	// of one stream (ids, states, object keys), saving most allocations.
	intern map[string]string
	// slots remember the last id read per field, so a repeat costs one
	// byte comparison instead of a hash lookup.
	slots [numSlots]string
	// lastMeta/lastMetaMap memoise the previous frame's result metadata.
	lastMeta    []byte
	lastMetaMap map[string]any
	// blk backs the current frame's Event and first Status; reset per frame.
	blk *frameBlock
	// text locates the frame's text strings for tmpl (decodetmpl.go).
	text textSpan
	tmpl frameTemplate
}

// Fields whose last value is remembered in scanner.slots.
const (
	slotTask = iota // taskId and a task's id
	slotContext
	slotMessage
	slotRole
	slotState
	slotMedia
	numSlots
)

const (
	maxInterned   = 512 // entries before the table is reset
	maxInternLen  = 64  // ids and keys
	maxInternWord = 16  // short string values ("working", "bash")
)

const maxJSONDepth = 10000

func (s *scanner) fail(what string) error {
	return errors.New(what + " at offset " + strconv.Itoa(s.i))
}

// peek skips whitespace and returns the next byte, or 0 at the end. The
// common case (no whitespace, as proto JSON is written) stays inlined.
func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		if c := s.b[s.i]; c > ' ' {
			return c
		}
	}
	return s.peekSlow()
}

func (s *scanner) peekSlow() byte {
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// null consumes a null literal when one comes next.
func (s *scanner) null() bool {
	if s.peek() == 'n' && len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// firstMember opens an object (null reads as an empty one) and returns its
// first key, positioned at the value; ok is false when there is none. The
// key is valid until the next string is read.
func (s *scanner) firstMember() (key []byte, ok bool, err error) {
	if s.peek() != '{' {
		if s.null() {
			return nil, false, nil
		}
		return nil, false, s.fail("expected '{'")
	}
	s.i++
	if s.depth++; s.depth > maxJSONDepth {
		return nil, false, s.fail("nesting too deep")
	}
	if s.peek() == '}' {
		s.i++
		s.depth--
		return nil, false, nil
	}
	return s.member()
}

// nextMember moves past the current value to the next key; ok is false
// at the end of the object.
func (s *scanner) nextMember() (key []byte, ok bool, err error) {
	switch s.peek() {
	case ',':
		s.i++
		return s.member()
	case '}':
		s.i++
		s.depth--
		return nil, false, nil
	}
	return nil, false, s.fail("expected ',' or '}'")
}

func (s *scanner) member() ([]byte, bool, error) {
	if s.peek() != '"' {
		return nil, false, s.fail("expected object key")
	}
	k, err := s.rawString()
	if err != nil {
		return nil, false, err
	}
	if s.peek() != ':' {
		return nil, false, s.fail("expected ':'")
	}
	s.i++
	return k, true, nil
}

// firstElem opens an array (null reads as an empty one); ok is false when
// it has no element.
func (s *scanner) firstElem() (ok bool, err error) {
	if s.peek() != '[' {
		if s.null() {
			return false, nil
		}
		return false, s.fail("expected '['")
	}
	s.i++
	if s.depth++; s.depth > maxJSONDepth {
		return false, s.fail("nesting too deep")
	}
	if s.peek() == ']' {
		s.i++
		s.depth--
		return false, nil
	}
	return true, nil
}

// nextElem moves past the current element; ok is false at the end.
func (s *scanner) nextElem() (ok bool, err error) {
	switch s.peek() {
	case ',':
		s.i++
		return true, nil
	case ']':
		s.i++
		s.depth--
		return false, nil
	}
	return false, s.fail("expected ',' or ']'")
}

// str reads a string (or null as "").
func (s *scanner) str() (string, error) {
	if s.null() {
		return "", nil
	}
	b, err := s.rawString()
	return string(b), err
}

// id reads a string that is likely to repeat (or null as ""): the value
// last read for the same slot, else an interned copy.
func (s *scanner) id(slot int) (string, error) {
	if s.peek() != '"' {
		if s.null() {
			return "", nil
		}
		return "", s.fail("expected string")
	}
	start := s.i + 1
	// A slot holds only strings read without escapes, so the same bytes
	// and a closing quote are the same string: one comparison, no scan.
	if last := s.slots[slot]; last != "" {
		if j := start + len(last); j < len(s.b) && s.b[j] == '"' && string(s.b[start:j]) == last {
			s.i = j + 1
			return last, nil
		}
	}
	end := plainEnd(s.b, start)
	if end < len(s.b) && s.b[end] == '"' {
		s.i = end + 1
		v := s.share(s.b[start:end], maxInternLen)
		if len(v) <= maxInternLen {
			s.slots[slot] = v
		}
		return v, nil
	}
	s.i = end
	b, err := s.slowString(start)
	return s.share(b, maxInternLen), err
}

func (s *scanner) share(b []byte, max int) string {
	if s.intern == nil || len(b) > max {
		return string(b)
	}
	if v, ok := s.intern[string(b)]; ok {
		return v
	}
	if len(s.intern) >= maxInterned {
		clear(s.intern)
	}
	v := string(b)
	s.intern[v] = v
	return v
}
