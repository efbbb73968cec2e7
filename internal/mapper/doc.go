// Package mapper translates decoded A2A events into AG-UI 1.0 events.
//
// It owns the A2A → AG-UI event mapping of protocol.md §4.7–§4.13: text,
// reasoning and tool spans, usage aggregation, pipeline envelope
// de-duplication and the step lifecycle, the recovery snapshot of §9.2, and
// the construction of AG-UI interrupts from A2A input projections (§5.1–§5.3),
// and the generic profile's mapping of plain A2A 1.0 status messages,
// artifacts and waiting states (generic.go, docs/upstream.md §10).
//
// The package is pure: no I/O, no clocks, no goroutines, and no randomness
// except through the injected Config.NewID. It must not import net/http,
// internal/state or the A2A client; it reads only the types of internal/a2a
// and produces the event structs of internal/agui. RUN_STARTED, identity
// checks, persistence and the terminal events belong to the orchestrator.
// The input kinds and the projection allowlist are internal/projection's.
//
// A Mapper is not safe for concurrent use; one run owns one Mapper.
package mapper
