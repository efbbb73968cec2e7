package pyjson

import (
	"encoding/json"
	"errors"
	"sort"
	"unsafe"

	"github.com/iac-code-agui/iac-code-agui/internal/jsonstr"
)

// errInvalid reports JSON text AppendText refuses.
var errInvalid = errors.New("pyjson: invalid JSON text")

// AppendText appends the canonical form of the JSON text raw: the bytes
// Append(dst, Decode(raw)) produces, without building the decoded value.
// Decoding first costs about 40 bytes per array element (an interface and
// a json.Number each), so a 12 MiB array of small numbers took hundreds of
// MiB; here the text is scanned in place, only object members are
// buffered (to sort their keys), and what stays live is proportional to the
// text. Duplicate keys: the last wins. raw must not change during the call.
func AppendText(dst, raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		return dst, errInvalid
	}
	s := scanner{raw: raw}
	dst, err := s.value(dst)
	if err != nil {
		return dst, err
	}
	return dst, nil
}

// scanner walks JSON text that json.Valid accepted.
type scanner struct {
	raw []byte
	pos int
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.raw) {
		switch s.raw[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value(dst []byte) ([]byte, error) {
	s.skipSpace()
	switch c := s.raw[s.pos]; {
	case c == '{':
		s.pos++
		return s.object(dst)
	case c == '[':
		s.pos++
		return s.array(dst)
	case c == '"':
		str, err := s.str()
		return jsonstr.AppendPython(dst, str), err
	case c == 't':
		s.pos += 4
		return append(dst, "true"...), nil
	case c == 'f':
		s.pos += 5
		return append(dst, "false"...), nil
	case c == 'n':
		s.pos += 4
		return append(dst, "null"...), nil
	default:
		start := s.pos
		for s.pos < len(s.raw) && isNumberByte(s.raw[s.pos]) {
			s.pos++
		}
		return AppendNumber(dst, view(s.raw[start:s.pos]))
	}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// str reads a string token. Without escapes it is a view of raw (no copy);
// with escapes it is decoded as encoding/json does (a lone surrogate
// becomes U+FFFD).
func (s *scanner) str() (string, error) {
	start := s.pos
	s.pos++
	escaped := false
	for s.raw[s.pos] != '"' {
		if s.raw[s.pos] == '\\' {
			escaped = true
			s.pos++
		}
		s.pos++
	}
	s.pos++
	tok := s.raw[start:s.pos]
	if !escaped {
		return view(tok[1 : len(tok)-1]), nil
	}
	var out string
	err := json.Unmarshal(tok, &out)
	return out, err
}

func (s *scanner) array(dst []byte) ([]byte, error) {
	dst = append(dst, '[')
	s.skipSpace()
	if s.raw[s.pos] == ']' {
		s.pos++
		return append(dst, ']'), nil
	}
	for {
		var err error
		if dst, err = s.value(dst); err != nil {
			return dst, err
		}
		s.skipSpace()
		c := s.raw[s.pos]
		s.pos++
		if c == ']' {
			return append(dst, ']'), nil
		}
		dst = append(dst, ',')
	}
}

type member struct {
	key string
	val []byte
}

func (s *scanner) object(dst []byte) ([]byte, error) {
	var members []member
	var index map[string]int
	s.skipSpace()
	if s.raw[s.pos] == '}' {
		s.pos++
		return append(dst, "{}"...), nil
	}
	for {
		s.skipSpace()
		key, err := s.str()
		if err != nil {
			return dst, err
		}
		s.skipSpace()
		s.pos++ // ':'
		val, err := s.value(nil)
		if err != nil {
			return dst, err
		}
		if i, dup := index[key]; dup {
			members[i].val = val
		} else {
			if index == nil {
				index = map[string]int{}
			}
			index[key] = len(members)
			members = append(members, member{key, val})
		}
		s.skipSpace()
		c := s.raw[s.pos]
		s.pos++
		if c == '}' {
			break
		}
	}
	// Byte order of valid UTF-8 equals Python's code-point order.
	sort.Slice(members, func(i, j int) bool { return members[i].key < members[j].key })
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonstr.AppendPython(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.val...)
	}
	return append(dst, '}'), nil
}

// view returns b as a string without copying; b is never modified while
// the string is in use (the caller's raw text, read-only here).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
