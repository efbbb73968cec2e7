package demoagent

import "sync"

// The guidance input journal: which handed-over inputs this agent has
// accepted. A message carrying guidance_id, input_digest and
// execution_fence (the adapter's delivery of a handed-over input,
// protocol.md §7.3) is journaled when the agent takes it: an answer to a
// parked input, or a guidance to a running pipeline. apply-input reads it
// to answer ALREADY_APPLIED (handoff.go). In memory, like the tasks.

const (
	journalNone = iota
	journalApplied
	journalConflict
)

type journalKey struct{ contextID, guidanceID string }

type journalEntry struct {
	digest string
	count  int // deliveries taken; more than one would be a duplicate
}

type inputJournal struct {
	mu      sync.Mutex
	entries map[journalKey]*journalEntry
}

// journalInput records m when it is a handed-over input.
func (a *Agent) journalInput(m *inMessage) {
	iac := m.iac()
	gid, digest := metaString(iac, "guidance_id"), metaString(iac, "input_digest")
	if _, fenced := iac["execution_fence"].(map[string]any); !fenced || gid == "" || digest == "" || m.ContextID == "" {
		return
	}
	j := &a.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.entries == nil {
		j.entries = map[journalKey]*journalEntry{}
	}
	k := journalKey{m.ContextID, gid}
	e := j.entries[k]
	if e == nil {
		e = &journalEntry{digest: digest}
		j.entries[k] = e
	}
	e.count++
}

func (a *Agent) journalState(contextID, guidanceID, digest string) int {
	j := &a.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.entries[journalKey{contextID, guidanceID}]
	switch {
	case e == nil:
		return journalNone
	case e.digest != digest:
		return journalConflict
	}
	return journalApplied
}

// HandoffDeliveries is how many times this agent took the handed-over
// input guidanceID of contextID (0 when never).
func (a *Agent) HandoffDeliveries(contextID, guidanceID string) int {
	j := &a.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	if e := j.entries[journalKey{contextID, guidanceID}]; e != nil {
		return e.count
	}
	return 0
}
