// Package suite holds the parts of the many-users performance suite
// (bench/cmd/suite, docs/benchmarks.md): a fast fake A2A upstream in the
// A2A 1.0 and 0.3 shapes, a lean AG-UI client that doubles as the direct
// A2A reader, the concurrent load driver, the bare durable write, and
// process probes (RSS, Prometheus gauges).
//
// It owns only load generation and measurement. It must not reach into
// the adapter: it talks to the real binary over loopback HTTP as a client
// would.
package suite
