package frame

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// rawString returns the bytes of a string without escapes in place, or a
// decoded copy. The caller must not keep the slice past the next call.
func (s *scanner) rawString() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.fail("expected string")
	}
	start := s.i + 1
	end := plainEnd(s.b, start)
	if end < len(s.b) && s.b[end] == '"' {
		s.i = end + 1
		return s.b[start:end], nil
	}
	s.i = end
	return s.slowString(start)
}

// plainEnd returns the index of the first byte at or after i that ends a
// plain string: a quote, a backslash, a control byte or a non-ASCII byte
// (or len(b)). It tests eight bytes at a time: one pass finds both the
// closing quote and whether the string needs the slow path.
func plainEnd(b []byte, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for ; len(b)-i >= 8; i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q := w ^ (lo * '"')
		bs := w ^ (lo * '\\')
		// The lowest flagged byte is exact: borrows only run upwards from
		// a byte that matched.
		m := ((q - lo) &^ q) | ((bs - lo) &^ bs) | ((w - lo*0x20) &^ w) | w
		if m &= hi; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

// slowString decodes the string that started at start, from s.i on (the
// bytes before are plain): escapes are decoded and invalid UTF-8 becomes
// U+FFFD, as encoding/json does.
func (s *scanner) slowString(start int) ([]byte, error) {
	out := append([]byte(nil), s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return out, nil
		case c < 0x20:
			return nil, s.fail("control character in string")
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, s.fail("unterminated string")
			}
			e := s.b[s.i+1]
			s.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := s.hex4()
				if !ok {
					return nil, s.fail("bad \\u escape")
				}
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
						save := s.i
						s.i += 2
						if r2, ok = s.hex4(); !ok {
							// Left for the loop to reject; r2 must not
							// look like a read escape, or the rewind
							// below would loop forever.
							s.i, r2 = save, -1
						}
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
					} else {
						r = utf8.RuneError
						if r2 >= 0 {
							s.i -= 6 // not a pair: re-read the second escape
						}
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				return nil, s.fail("bad escape")
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			s.i++
		default:
			r, size := utf8.DecodeRune(s.b[s.i:])
			out = utf8.AppendRune(out, r) // RuneError for invalid bytes
			s.i += size
		}
	}
	return nil, s.fail("unterminated string")
}

func (s *scanner) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	s.i += 4
	return r, true
}
