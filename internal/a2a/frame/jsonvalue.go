package frame

import (
	"encoding/json"
	"strconv"
)

// numberEnd returns the end of the JSON number starting at s.i, or -1
// when the bytes there are not one. The grammar is JSON's, which is
// stricter than strconv.ParseFloat ("01", "1.", ".5" and "+1" fail, as
// they do in encoding/json).
func (s *scanner) numberEnd() int {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func (s *scanner) number() (float64, error) {
	s.peek()
	end := s.numberEnd()
	if end < 0 {
		return 0, s.fail("expected number")
	}
	f, err := strconv.ParseFloat(string(s.b[s.i:end]), 64)
	if err != nil {
		return 0, s.fail("bad number") // out of range, as in encoding/json
	}
	s.i = end
	return f, nil
}

// literal consumes true, false or null.
func (s *scanner) literal() (any, error) {
	rest := s.b[s.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		s.i += 4
		return true, nil
	case len(rest) >= 5 && string(rest[:5]) == "false":
		s.i += 5
		return false, nil
	case len(rest) >= 4 && string(rest[:4]) == "null":
		s.i += 4
		return nil, nil
	}
	return nil, s.fail("bad literal")
}

// value reads any JSON value the way encoding/json decodes into any.
func (s *scanner) value() (any, error) {
	switch c := s.peek(); {
	case c == '{':
		m := map[string]any{}
		k, ok, err := s.firstMember()
		for ok {
			key := s.share(k, maxInternLen)
			var v any
			if v, err = s.value(); err != nil {
				return m, err
			}
			m[key] = v
			k, ok, err = s.nextMember()
		}
		return m, err
	case c == '[':
		a := []any{}
		ok, err := s.firstElem()
		for ok {
			var v any
			if v, err = s.value(); err != nil {
				return a, err
			}
			a = append(a, v)
			ok, err = s.nextElem()
		}
		return a, err
	case c == '"':
		b, err := s.rawString()
		return s.share(b, maxInternWord), err
	case c == 't' || c == 'f' || c == 'n':
		return s.literal()
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return nil, s.fail("unexpected byte")
}

// skip consumes one value without building it.
func (s *scanner) skip() error {
	var err error
	switch c := s.peek(); {
	case c == '{':
		var ok bool
		_, ok, err = s.firstMember()
		for ok && err == nil {
			if err = s.skip(); err == nil {
				_, ok, err = s.nextMember()
			}
		}
	case c == '[':
		var ok bool
		ok, err = s.firstElem()
		for ok && err == nil {
			if err = s.skip(); err == nil {
				ok, err = s.nextElem()
			}
		}
	case c == '"':
		_, err = s.rawString()
	case c == '-' || (c >= '0' && c <= '9'):
		end := s.numberEnd()
		if end < 0 {
			return s.fail("expected number")
		}
		s.i = end
	default:
		_, err = s.literal()
	}
	return err
}

// raw consumes one value and returns a copy of its bytes.
func (s *scanner) raw() (json.RawMessage, error) {
	s.peek()
	start := s.i
	if err := s.skip(); err != nil {
		return nil, err
	}
	return append(json.RawMessage(nil), s.b[start:s.i]...), nil
}
