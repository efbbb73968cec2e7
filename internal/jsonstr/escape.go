package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// safeASCII marks the ASCII bytes copied into a JSON string as they are:
// everything from 0x20 up except '"' and '\\' (DEL included, as both
// encoding/json and Python write it).
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// Append appends s as a JSON string literal exactly as encoding/json writes
// it with HTML escaping off: '"', '\\' and control characters escaped,
// invalid UTF-8 bytes written as \ufffd, U+2028 and U+2029 escaped.
func Append(dst []byte, s string) []byte { return appendQuoted(dst, s, false) }

// AppendPython appends s as Python's json.dumps with ensure_ascii=False
// writes it: only '"', '\\' and control characters below U+0020 are
// escaped and U+2028/U+2029 stay raw. Invalid UTF-8 (which a Python str
// cannot hold) becomes a raw U+FFFD, the character Python's decoder with
// errors="replace" would have produced.
func AppendPython(dst []byte, s string) []byte { return appendQuoted(dst, s, true) }

// appendQuoted is the one escaping loop; python selects the two rules in
// which the forms differ, both on the rare non-ASCII path.
func appendQuoted(dst []byte, s string, python bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if safeASCII[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			if python {
				dst = append(dst, "\ufffd"...)
			} else {
				dst = append(dst, `\ufffd`...)
			}
		case (c == '\u2028' || c == '\u2029') && !python:
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendSanitized appends JSON text produced by encoding/json, escaping
// U+2028/U+2029 and replacing invalid UTF-8 with \ufffd, so that it follows
// Append's rules. encoding/json leaves both raw inside json.RawMessage
// values when HTML escaping is off; non-ASCII bytes can only occur inside
// string literals, so escaping them in place keeps the JSON valid.
func AppendSanitized(dst, src []byte) []byte {
	start := 0
	for i := 0; i < len(src); {
		if src[i] < utf8.RuneSelf {
			i++
			continue
		}
		c, size := utf8.DecodeRune(src[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, src[start:]...)
}
