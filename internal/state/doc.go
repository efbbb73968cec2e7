// Package state owns the durable per-thread mapping document of the AG-UI
// adapter (protocol.md §8): its Go types (schemaVersion 1, byte-compatible with
// the original Python adapter), the codec (validation on load, the exact
// bytes the original writes), the thread-id to file-key encoding, the
// conditional Store contract with its memory implementation, and the
// lease context the shared store fences writes with. The stores that
// persist documents live below it: state/filestore (one file per thread, as
// the original) and state/redisstore.
//
// It must not touch files, networks, HTTP, AG-UI events or A2A calls, and it
// never logs: it holds identities, cursors, pending interrupt projections and
// idempotency digests only. Secrets and message text never reach this
// package; on load and save every pending value goes through
// projection.Project, which drops each key outside the public allowlist, as
// a second line of defence. The allowlist itself belongs to
// internal/projection.
package state
