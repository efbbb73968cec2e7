// Package server owns the HTTP surface of the adapter: routing, the Host
// and Origin checks and CORS for listed origins (hosts.go, cors.go), bearer
// authentication, the pre-stream checks of POST / and of the cancellation
// extension in their specified order (media type, body limits, JSON,
// envelope), the JSON error envelope, the SSE response, the health and
// metrics routes, the mounting of the browser console (internal/console)
// and the redirect of a browser's GET / to it, the per-route request
// counter, the request id (X-Request-Id) and the access log, the
// connections of parked run streams (hijacked from net/http while many
// streams are open, written and watched here, protocol.md §4.1), and the
// server's timeouts and graceful shutdown (protocol.md §2, §7.1).
//
// It hands admitted requests to the adapter package and must not interpret
// A2A data, thread state or the iac-code extension beyond extracting the
// preferred language.
package server
