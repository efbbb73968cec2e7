package mapper

import "github.com/iac-code-agui/iac-code-agui/internal/pyjson"

// appendJSON appends v as compact JSON with sorted object keys, non-ASCII
// kept as is and no HTML escaping: the form of Python's json.dumps with
// sort_keys, ensure_ascii=False and separators (",", ":"), which is what
// clients of the original saw in TOOL_CALL_ARGS and tool results.
// Integral floats are written without a fraction ("3", not "3.0"), because
// A2A turns every JSON number into a double and the source value was an
// integer. A value that cannot be encoded becomes null.
func appendJSON(b []byte, v any) []byte {
	out, err := pyjson.Append(b, v, pyjson.Options{IntegralFloatsAsInts: true})
	if err != nil {
		return append(b, "null"...)
	}
	return out
}
