package state

import "context"

type leaseKey struct{}

// WithLease returns a context whose writes are fenced by a thread lease:
// a store shared by several replicas (the Redis store) refuses a save with
// ErrFenced unless the thread's lease is still exactly lease, so a replica
// that lost ownership can never overwrite the new owner's state. Stores of
// one process ignore it.
func WithLease(ctx context.Context, lease string) context.Context {
	return context.WithValue(ctx, leaseKey{}, lease)
}

// LeaseOf returns the lease of ctx, or "".
func LeaseOf(ctx context.Context) string {
	s, _ := ctx.Value(leaseKey{}).(string)
	return s
}
