package a2a

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// scanner is a small JSON reader over one frame. The frame decoder uses it
// instead of encoding/json's reflection, which costs several µs and ~35
// allocations per text-delta frame; results match encoding/json's
// untyped decoding (objects map[string]any, arrays []any, numbers
// float64). Keys match exactly (proto JSON), not case-insensitively.
type scanner struct {
	b     []byte
	i     int
	depth int
	// intern, when set, shares the strings that repeat across the frames
	// of one stream (ids, states, object keys), saving most allocations.
	intern map[string]string
	// lastMeta/lastMetaMap memoise the previous frame's result metadata.
	lastMeta    []byte
	lastMetaMap map[string]any
}

const (
	maxInterned   = 512 // entries before the table is reset
	maxInternLen  = 64  // ids and keys
	maxInternWord = 16  // short string values ("working", "bash")
)

const maxJSONDepth = 10000

func (s *scanner) fail(what string) error {
	return errors.New(what + " at offset " + strconv.Itoa(s.i))
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return s.fail("expected " + strconv.QuoteRune(rune(c)))
	}
	s.i++
	return nil
}

// null consumes a null literal when one comes next.
func (s *scanner) null() bool {
	if s.peek() == 'n' && len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// object walks the members of an object, calling f with each key (valid
// only during the call) while positioned at the value; null is accepted
// as an absent object.
func (s *scanner) object(f func(key []byte) error) error {
	if s.null() {
		return nil
	}
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.depth++; s.depth > maxJSONDepth {
		return s.fail("nesting too deep")
	}
	if s.peek() == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.fail("expected object key")
		}
		key, err := s.rawString()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := f(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return nil
		default:
			return s.fail("expected ',' or '}'")
		}
	}
}

// array walks the elements of an array; null is accepted as empty.
func (s *scanner) array(f func() error) error {
	if s.null() {
		return nil
	}
	if err := s.expect('['); err != nil {
		return err
	}
	if s.depth++; s.depth > maxJSONDepth {
		return s.fail("nesting too deep")
	}
	if s.peek() == ']' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if err := f(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return nil
		default:
			return s.fail("expected ',' or ']'")
		}
	}
}

// rawString returns the bytes of a string without escapes in place, or a
// decoded copy. The caller must not keep the slice past the next call.
func (s *scanner) rawString() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.fail("expected string")
	}
	s.i++
	start := s.i
	q := bytes.IndexByte(s.b[start:], '"')
	if q < 0 {
		return nil, s.fail("unterminated string")
	}
	seg := s.b[start : start+q]
	if plainASCII(seg) {
		s.i = start + q + 1
		return seg, nil
	}
	return s.slowString(start)
}

// str reads a string (or null as "").
func (s *scanner) str() (string, error) {
	if s.null() {
		return "", nil
	}
	b, err := s.rawString()
	return string(b), err
}

// id reads a string that is likely to repeat (or null as "").
func (s *scanner) id() (string, error) {
	if s.null() {
		return "", nil
	}
	b, err := s.rawString()
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

func (s *scanner) number() (float64, error) {
	s.ws()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		s.i++
	}
	if start == s.i || (s.b[start] != '-' && (s.b[start] < '0' || s.b[start] > '9')) {
		return 0, s.fail("expected number")
	}
	f, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	if err != nil {
		return 0, s.fail("bad number")
	}
	return f, nil
}

// value reads any JSON value the way encoding/json decodes into any.
func (s *scanner) value() (any, error) {
	switch c := s.peek(); {
	case c == '{':
		m := map[string]any{}
		err := s.object(func(k []byte) error {
			key := s.share(k, maxInternLen)
			v, err := s.value()
			m[key] = v
			return err
		})
		return m, err
	case c == '[':
		a := []any{}
		err := s.array(func() error {
			v, err := s.value()
			a = append(a, v)
			return err
		})
		return a, err
	case c == '"':
		b, err := s.rawString()
		return s.share(b, maxInternWord), err
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range [...]struct {
			text string
			v    any
		}{{"true", true}, {"false", false}, {"null", nil}} {
			if len(s.b)-s.i >= len(lit.text) && string(s.b[s.i:s.i+len(lit.text)]) == lit.text {
				s.i += len(lit.text)
				return lit.v, nil
			}
		}
		return nil, s.fail("bad literal")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return nil, s.fail("unexpected byte")
}

// skip consumes one value without building it.
func (s *scanner) skip() error {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) error { return s.skip() })
	case c == '[':
		return s.array(s.skip)
	case c == '"':
		_, err := s.rawString()
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := s.number()
		return err
	}
	_, err := s.value()
	return err
}

// raw consumes one value and returns a copy of its bytes.
func (s *scanner) raw() (json.RawMessage, error) {
	s.ws()
	start := s.i
	if err := s.skip(); err != nil {
		return nil, err
	}
	return append(json.RawMessage(nil), s.b[start:s.i]...), nil
}

// plainASCII reports whether b has no backslash, control byte or non-ASCII
// byte, eight bytes at a time.
func plainASCII(b []byte) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		// any byte >= 0x80, any byte < 0x20, any byte == '\\'
		bs := w ^ (lo * '\\')
		if (w|((w-lo*0x20)&^w)|((bs-lo)&^bs))&hi != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 || c >= utf8.RuneSelf || c == '\\' {
			return false
		}
	}
	return true
}
