// Package adapter owns the run: admission of a validated AG-UI request
// against its thread (binding, idempotency, one active run, resume rules),
// the A2A execution that serves it, interrupts and their exactly-once
// answers, the cancellation extension, disconnects, fail-closed writes and
// the end a graceful stop gives its runs (protocol.md §2.7, §3.5–§3.6,
// §4.4, §5, §6, §7.1, §9).
//
// The same rules serve any A2A 1.0 agent under --a2a-profile generic
// (generic.go, docs/upstream.md §10): only the requests it sends and the
// answers it gives differ.
//
// It drives the A2A client, the thread store and, when it is on, the
// session-handoff writer fence (fence.go), and delegates every
// translation of A2A data into AG-UI events to the pure mapper package. It
// must not parse HTTP, encode SSE frames or decide file formats: the server,
// agui and state packages own those.
//
// It reports coarse facts (runs, interrupts, admission refusals, state
// writes) to an Observer and must not depend on a metrics library. At the
// same points it makes the admission and run spans of Options.Tracer, an
// OpenTelemetry API tracer (trace.go), and nothing when it is nil.
package adapter
