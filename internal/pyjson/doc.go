// Package pyjson writes JSON text exactly as Python's
// json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
// does: keys sorted by code point, no whitespace, only '"', '\\' and control
// characters escaped, integers as written and floats in repr form.
//
// The original adapter used that form for two things clients or files can
// observe, so matching it byte for byte keeps the two implementations
// interchangeable: the canonical request digest that classifies replayed
// run ids (protocol.md §6) and the tool arguments of TOOL_CALL_ARGS
// (protocol.md §4.9).
//
// This is deliberately not the AG-UI wire's JSON (internal/agui): Python
// leaves U+2028/U+2029 raw, writes floats in repr form and NaN as NaN, and
// a digest over any other form would not match the original's. Both take
// their string escaping from internal/jsonstr (AppendPython here, Append
// there), so the escaping loop exists once.
//
// It owns only the encoding; it must not parse requests or know AG-UI or
// A2A shapes.
package pyjson
