package state

import (
	"slices"
)

// MaxRunDigests bounds the run history of one thread (protocol.md §6): the
// idempotency of the newest MaxRunDigests run ids is kept, older ones are
// forgotten. Ours: the original keeps every run id forever, so a long-lived
// thread grows without bound (docs/decisions.md).
const MaxRunDigests = 1000

// RecordRun stores the digest of runID as the thread's newest run and
// forgets the oldest runs beyond MaxRunDigests.
func (t *Thread) RecordRun(runID, digest string) {
	if t.RunDigests == nil {
		t.RunDigests = map[string]string{}
	}
	t.RunOrder = slices.DeleteFunc(t.runOrder(), func(id string) bool { return id == runID })
	t.RunOrder = append(t.RunOrder, runID)
	t.RunDigests[runID] = digest
	for len(t.RunOrder) > MaxRunDigests {
		delete(t.RunDigests, t.RunOrder[0])
		t.RunOrder = t.RunOrder[1:]
	}
	t.RunOrder = slices.Clip(t.RunOrder)
}

// runOrder returns the run ids of RunDigests oldest first: those RunOrder
// names, in its order, after the ones it does not name (written by the
// original or by hand), which count as older, sorted for determinism.
func (t *Thread) runOrder() []string {
	known := make(map[string]bool, len(t.RunOrder))
	ordered := make([]string, 0, len(t.RunDigests))
	for _, id := range t.RunOrder {
		if _, ok := t.RunDigests[id]; ok && !known[id] {
			known[id] = true
			ordered = append(ordered, id)
		}
	}
	var older []string
	for id := range t.RunDigests {
		if !known[id] {
			older = append(older, id)
		}
	}
	slices.Sort(older)
	return append(older, ordered...)
}
