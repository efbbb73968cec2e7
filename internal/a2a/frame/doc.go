// Package frame decodes one A2A 1.0 JSON-RPC response frame (an SSE data
// payload or a plain JSON body) into the lean values the adapter reads: an
// *Event for a result, an *RPCError for a JSON-RPC error.
//
// It owns the frame grammar and its hand-written JSON scanner, which is
// kept over encoding/json for speed (about 0.2 µs a text-delta frame in a
// stream against 4.6 µs, dependencies.md §0.1), and the Event, Status,
// Message and Part types. Its answers are those of the encoding/json
// reference decoder in its tests, with Python's json semantics for object
// keys: keys match exactly and the last of repeated members wins whole.
//
// It must not do I/O, SSE framing, HTTP or JSON-RPC requests, and must not
// import internal/a2a, which uses it and re-exports its types; nor does it
// know AG-UI, and it never logs.
package frame
