package state

import "context"

type bestEffortKey struct{}

// BestEffort returns a context whose saves need not be durable when Save
// returns: the writes the original does not fail on (protocol.md §8.8,
// the terminal mark and the clean-up after a failed write). A file store
// without its journal still replaces the document atomically, so a killed
// process leaves the old or the new document, but it does not fsync the
// directory for them (nor a new temporary file; a spare is fsynced,
// protocol.md §8.5), and a power loss may lose the write. Conditional
// semantics are unchanged. Stores whose durable writes cost no more,
// among them a file store with its journal, ignore it.
func BestEffort(ctx context.Context) context.Context {
	return context.WithValue(ctx, bestEffortKey{}, true)
}

func isBestEffort(ctx context.Context) bool {
	b, _ := ctx.Value(bestEffortKey{}).(bool)
	return b
}
