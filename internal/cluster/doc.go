// Package cluster lets several adapter replicas serve the same threads
// (docs/scale-out.md). A thread's live execution belongs to the replica
// whose A2A server holds it, its owner: the owner is recorded in Redis as a
// lease with a TTL that the owner renews, and every change of owner bumps a
// fencing token. A replica that receives a request of a thread it does not
// own forwards it to the owner's advertised address, authenticated with
// the replicas' shared token, and relays the answer, SSE included.
//
// It owns the lease keys and scripts, the renewal loop, and the forwarding
// proxy. It must not know AG-UI events, thread documents or A2A: the
// server asks it where a request goes, and the state store checks the
// lease it is handed (state.WithLease) on every write.
package cluster
