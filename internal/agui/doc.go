// Package agui owns the AG-UI 1.0 wire: the event types and their exact
// one-line JSON encoding, the SSE writer (framing, heartbeat, flushing) and
// the RunAgentInput envelope with its schema validation. String escaping
// (encoding/json's rules, byte for byte) is internal/jsonstr's.
//
// It must not know about A2A, thread state, admission or HTTP routing: it
// receives events that are already mapped and bodies that are already read,
// and it never logs. Callers own translation, error envelopes and routing.
package agui
