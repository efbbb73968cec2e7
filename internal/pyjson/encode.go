package pyjson

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/jsonstr"
)

// Options adjust the output for values that did not come from Python.
type Options struct {
	// IntegralFloatsAsInts writes 3.0 as "3": A2A metadata turns every
	// number into a double, so a float64 with no fraction was an integer at
	// its source. json.Number literals are unaffected.
	IntegralFloatsAsInts bool
}

// ErrUnsupported reports a value Append cannot encode.
var ErrUnsupported = errors.New("pyjson: unsupported value")

// Append appends v: nil, bool, string, float64, int, int64, json.Number
// (its literal decides int or float, as Python's json.loads does),
// json.RawMessage, map[string]any and []any. Other Go values go through
// encoding/json first.
func Append(dst []byte, v any, o Options) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case string:
		return jsonstr.AppendPython(dst, x), nil
	case float64:
		if o.IntegralFloatsAsInts && x == math.Trunc(x) && math.Abs(x) < 1e21 {
			return strconv.AppendFloat(dst, x, 'f', -1, 64), nil
		}
		return AppendFloat(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case json.Number:
		return AppendNumber(dst, string(x))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Byte order of valid UTF-8 equals Python's code-point order.
		sort.Strings(keys)
		dst = append(dst, '{')
		var err error
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonstr.AppendPython(dst, k)
			dst = append(dst, ':')
			if dst, err = Append(dst, x[k], o); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		dst = append(dst, '[')
		var err error
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = Append(dst, e, o); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case json.RawMessage:
		d, err := Decode(x)
		if err != nil {
			return dst, err
		}
		return Append(dst, d, o)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return dst, ErrUnsupported
	}
	return Append(dst, json.RawMessage(raw), o)
}

// Decode parses JSON text keeping number literals (json.Number), as the
// input of Append; trailing data is an error.
func Decode(raw []byte) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("pyjson: trailing data after JSON value")
	}
	return v, nil
}
