// Package a2a is the adapter's A2A 1.0 client: it owns every byte exchanged
// with the upstream iac-code A2A server. That is JSON-RPC 2.0 over HTTP POST,
// a lean SSE reader for the streaming methods
// (SendStreamingMessage, SubscribeToTask), the non-streaming methods
// (SendMessage, GetTask, CancelTask), the two iac-code side routes
// (/iac-code/pipeline/state and /iac-code/session/ensure-restored) and the
// /health probe. Each response frame is decoded by package frame, whose
// Event, Status, Message and Part types it re-exports.
//
// It must not know AG-UI, thread state or HTTP serving: callers get lean
// Event values and typed errors (*RPCError, *HTTPError, the Err* values) and
// decide what they mean. It never logs, and it keeps the bearer token and
// message text out of every error it returns.
//
// The streaming read path is hand-written instead of the a2a-go SDK client
// because the SDK drops plain JSON errors answered to stream requests,
// cannot decode object error data and costs about 40 µs a frame
// (dependencies.md §0.1, §1.3). The SDK types are still used to build requests.
//
// Calls to a plain-HTTP upstream through the default HTTP client, streaming
// and unary, run on connections the client owns (lean.go, leanwire.go,
// leanbody.go, chunked.go) rather than net/http's Transport, whose read and
// write goroutines and buffers per connection cost every waiting stream
// about 14 KiB; HTTPS, proxies and injected clients keep net/http.
package a2a
