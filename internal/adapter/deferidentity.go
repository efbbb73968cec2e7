package adapter

import "context"

// A task id is the only identity iac-code's first frame names; the session
// id comes in the next frame, which the A2A reader usually holds already.
// bindIdentity then keeps the task id in runState.deferredTask and writes
// both in one save when that frame is handled (docs/benchmarks.md,
// "Which writes must be durable"): one durable write per turn fewer.
// Nothing that depends on the task id may pass while it is deferred, so
// every point that would let an event out or end the stream commits it
// first (bindDeferred).

// bindDeferred commits a deferred task id: before a flush, before an
// interrupt is committed, and when the stream ends.
func (rs *runState) bindDeferred(ctx context.Context) error {
	task := rs.deferredTask
	if task == "" {
		return nil
	}
	rs.deferredTask = ""
	return rs.commitIdentity(ctx, task, "")
}
