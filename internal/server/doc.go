// Package server owns the HTTP surface of the adapter: routing, the Host
// and Origin checks and CORS for listed origins (hosts.go, cors.go), bearer
// authentication, the pre-stream checks of POST / and of the cancellation
// extension in their specified order (media type, body limits, JSON,
// envelope), the JSON error envelope (and the subscribe route's
// {"error": <text>}, protocol.md §7.2), the SSE response, the health and
// metrics routes, the mounting of the browser console (internal/console),
// its read-only workspace-roots route (consoleroots.go) and the redirect
// of a browser's GET / to it, the per-route request
// counter, the request id (X-Request-Id) and the access log, and the
// server's timeouts (protocol.md §2, §7.1), among them the bound on each
// write of a stream (protocol.md §4.1).
//
// Every response goes through net/http's http.ResponseWriter: flushes and
// write deadlines through http.ResponseController, a client's disconnect
// seen through the request's context. Nothing here takes a connection
// away from http.Server, so its timeouts and Shutdown cover every stream.
//
// It hands admitted requests to the adapter package and must not interpret
// A2A data, thread state or the iac-code extension beyond extracting the
// preferred language.
package server
