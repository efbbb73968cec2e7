// Package redisstore keeps thread documents in Redis, so that several
// adapter replicas share them (docs/scale-out.md). It implements
// state.Store: the same schema-1 bytes as the file store (state.Encode and
// state.Decode), one hash per thread under a configurable prefix, and a
// conditional save as a Lua script that compares and bumps a revision
// counter atomically, so two replicas can never lose each other's update.
// Every save also appends its revision to a capped per-thread stream, the
// revision history that operators and tests read. Threads walks every
// document under the prefix with SCAN, never KEYS, for
// `iac-code-agui export-state`, the way back to files.
//
// The keys of one thread share a hash tag ({<file key>}), so the script
// runs on Redis Cluster as well as on a single server or behind Sentinel.
//
// It owns the key layout, the scripts and the walk over the keys. It must
// not know HTTP, AG-UI or A2A, must not write files (export-state hands
// the documents to the file store), must not log, and never stores or
// returns the Redis password.
package redisstore
