// Package metrics owns the Prometheus metrics of the adapter: its own
// registry (with the Go and process collectors), the run, interrupt,
// admission and state-write series fed through adapter.Observer, the HTTP
// request counter fed by the server, and the handler of GET /metrics. The
// original adapter records no metrics (protocol.md §11, §12.12); this is a
// product addition.
//
// Every label value is drawn from a bounded set (the interrupt kinds are
// projection.Kinds, not a list of their own): it must never carry a
// thread id, run id, message text or secret, and must not grow with the
// traffic. It must not touch HTTP routing, authentication or adapter state:
// the server and adapter packages own those.
package metrics
