// Package bench holds the end-to-end relay benchmark of the adapter: a fast
// fake A2A upstream, the real adapter and HTTP server, and a minimal AG-UI
// client, all on loopback in one process (docs/benchmarks.md).
//
// It owns only its test files and this comment. It must not touch the code
// under internal/: it drives the adapter through its public constructors and
// its HTTP surface, exactly as a client would, and never reaches into the
// packages it measures.
package bench
