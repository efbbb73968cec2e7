// Package jsonstr owns the escaping of JSON string literals, in the two
// forms the gateway writes, so that the rules live in one loop:
//
//   - Append: encoding/json's output with HTML escaping off. The AG-UI wire
//     (internal/agui) uses it: the result never holds a raw line break, so
//     an SSE data line stays one line, and U+2028/U+2029 are escaped.
//   - AppendPython: Python's json.dumps(..., ensure_ascii=False). The
//     Python-compatible JSON of internal/pyjson (request digest, tool
//     arguments) uses it: U+2028/U+2029 stay raw, as in the original.
//
// AppendSanitized applies Append's rules for non-ASCII text to JSON that
// encoding/json already wrote.
//
// Every function appends to dst and allocates only when dst must grow. The
// package is a leaf: it must not import other packages of this module or
// know AG-UI, A2A or Python values other than strings.
package jsonstr
