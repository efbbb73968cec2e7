package mapper

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// appendJSON appends v as compact JSON with sorted object keys, non-ASCII
// kept as is and no HTML escaping: the form of Python's json.dumps with
// sort_keys, ensure_ascii=False and separators (",", ":"), which is what
// clients of the original saw in TOOL_CALL_ARGS and tool results.
// Integral floats are written without a fraction ("3", not "3.0"), because
// A2A turns every JSON number into a double and the source value was an
// integer.
func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return appendString(b, x)
	case float64:
		return appendFloat(b, x)
	case float32:
		return appendFloat(b, float64(x))
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case json.Number:
		if f, err := x.Float64(); err == nil {
			if _, err := x.Int64(); err == nil {
				return append(b, x...)
			}
			return appendFloat(b, f)
		}
		return appendString(b, string(x))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendJSON(b, x[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	case json.RawMessage:
		var d any
		if err := json.Unmarshal(x, &d); err != nil {
			return append(b, "null"...)
		}
		return appendJSON(b, d)
	}
	// Other Go values (structs, typed slices) are normalised through
	// encoding/json so the output keeps the same rules.
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return appendJSON(b, json.RawMessage(raw))
}

func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	abs := math.Abs(f)
	if abs < 1e-6 || abs >= 1e21 {
		b = strconv.AppendFloat(b, f, 'e', -1, 64)
		// e-07 → e-7, as encoding/json writes it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendString quotes s like Python's json.dumps(ensure_ascii=False):
// only '"', '\\' and control characters are escaped. Invalid UTF-8 becomes
// U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
