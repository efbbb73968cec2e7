// Package a2a is the adapter's A2A 1.0 client: it owns every byte exchanged
// with the upstream iac-code A2A server, or with any A2A 1.0 agent in the
// generic profile. That is JSON-RPC 2.0 over HTTP POST, an SSE reader for
// the streaming methods (SendStreamingMessage, SubscribeToTask), the
// non-streaming methods (SendMessage, GetTask, CancelTask), the two
// iac-code side routes (/iac-code/pipeline/state and
// /iac-code/session/ensure-restored), the /health probe, and the agent card
// from which WithAgentCard takes a generic agent's JSON-RPC URL (card.go).
// Each response frame is decoded by package frame, whose
// Event, Status, Message and Part types it re-exports.
//
// It must not know AG-UI, thread state or HTTP serving: callers get plain
// Event values and typed errors (*RPCError, *HTTPError, the Err* values) and
// decide what they mean. It never logs, and it keeps the bearer token and
// message text out of every error it returns.
//
// The streaming read path is hand-written instead of the a2a-go SDK client
// because the SDK drops plain JSON errors answered to stream requests,
// cannot decode object error data and is many times slower a frame
// (dependencies.md §0.1, §1.3). The SDK types are still used to build requests.
//
// Every call, streaming and unary, over HTTP or HTTPS, goes through one
// net/http Transport (transport.go); the SSE reader reads the plain
// response body. With WithTracing each call is a client span whose
// context goes upstream as traceparent (trace.go).
package a2a
