// Package state owns the durable per-thread mapping document of the AG-UI
// adapter (protocol.md §8): its Go types (schemaVersion 1, byte-compatible with
// the original Python adapter), the thread-id to file-key encoding, validation
// on load, and atomic, owner-private persistence under <root>/threads, made
// durable through the write-ahead journal in <root>/.journal.
//
// It must not know HTTP, AG-UI events or A2A calls, and it never logs: it
// stores identities, cursors, pending interrupt projections and idempotency
// digests only. Secrets and message text never reach this package; on load
// and save every pending value goes through projection.Project, which drops
// each key outside the public allowlist, as a second line of defence. The
// allowlist itself belongs to internal/projection.
package state
