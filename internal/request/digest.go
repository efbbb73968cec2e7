package request

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Digest returns the canonical request digest (adapter.md §6): SHA-256,
// lowercase hex, of the parsed body re-serialised exactly like Python's
// json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).
// Matching Python byte for byte keeps replays of requests admitted by the
// original adapter classified as DUPLICATE_RUN_ID.
func Digest(body []byte) (string, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	w := bufio.NewWriterSize(h, 32<<10)
	if err := writeCanonical(w, v); err != nil {
		return "", err
	}
	if err := w.Flush(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func writeCanonical(w *bufio.Writer, v any) error {
	switch x := v.(type) {
	case nil:
		w.WriteString("null")
	case bool:
		if x {
			w.WriteString("true")
		} else {
			w.WriteString("false")
		}
	case string:
		writePyString(w, x)
	case json.Number:
		s, err := pyNumber(x.String())
		if err != nil {
			return err
		}
		w.WriteString(s)
	case []any:
		w.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := writeCanonical(w, e); err != nil {
				return err
			}
		}
		w.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Byte order of valid UTF-8 equals Python's code-point order.
		sort.Strings(keys)
		w.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				w.WriteByte(',')
			}
			writePyString(w, k)
			w.WriteByte(':')
			if err := writeCanonical(w, x[k]); err != nil {
				return err
			}
		}
		w.WriteByte('}')
	default:
		return errors.New("unexpected JSON value type")
	}
	return nil
}

const hexDigits = "0123456789abcdef"

// writePyString writes s quoted with Python's json escaping under
// ensure_ascii=False: only '"', '\\' and controls below U+0020 are escaped.
func writePyString(w *bufio.Writer, s string) {
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		w.WriteString(s[start:i])
		switch c {
		case '"':
			w.WriteString(`\"`)
		case '\\':
			w.WriteString(`\\`)
		case '\n':
			w.WriteString(`\n`)
		case '\r':
			w.WriteString(`\r`)
		case '\t':
			w.WriteString(`\t`)
		case '\b':
			w.WriteString(`\b`)
		case '\f':
			w.WriteString(`\f`)
		default:
			w.WriteString(`\u00`)
			w.WriteByte(hexDigits[c>>4])
			w.WriteByte(hexDigits[c&0xf])
		}
		start = i + 1
	}
	w.WriteString(s[start:])
	w.WriteByte('"')
}

// pyNumber renders a JSON number literal as Python would after json.loads:
// integers keep their digits (Python ints are unbounded; -0 becomes 0),
// floats use repr.
func pyNumber(lit string) (string, error) {
	if !strings.ContainsAny(lit, ".eE") {
		if lit == "-0" {
			return "0", nil
		}
		return lit, nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return "", err
	}
	// Overflow gives ±Inf, which Python's json.dumps writes as Infinity.
	switch {
	case math.IsInf(f, 1):
		return "Infinity", nil
	case math.IsInf(f, -1):
		return "-Infinity", nil
	}
	return pyFloatRepr(f), nil
}

// pyFloatRepr formats f like Python's repr(float): the shortest
// round-trip digits, positional when the decimal exponent is in [-4, 16),
// else scientific with a signed exponent of at least two digits.
func pyFloatRepr(f float64) string {
	neg := math.Signbit(f)
	if f == 0 {
		if neg {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(math.Abs(f), 'e', -1, 64) // d[.ddd]e±XX
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	decpt := exp + 1 // value = 0.digits × 10^decpt
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case decpt > 16 || decpt < -3:
		b.WriteByte(digits[0])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
	case decpt <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -decpt))
		b.WriteString(digits)
	case decpt >= len(digits):
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", decpt-len(digits)))
		b.WriteString(".0")
	default:
		b.WriteString(digits[:decpt])
		b.WriteByte('.')
		b.WriteString(digits[decpt:])
	}
	return b.String()
}
