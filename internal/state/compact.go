package state

import (
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/projection"
)

// Compacted returns a deep copy of t that shares no memory with it, its
// strings included. A long-lived cache can swap its documents for such
// copies after a burst of requests: the originals were allocated between
// the burst's short-lived objects, and each one would keep a mostly empty
// page of the heap alive (docs/benchmarks.md, open streams).
func (t *Thread) Compacted() *Thread {
	if t == nil {
		return nil
	}
	c := &Thread{
		SchemaVersion:    t.SchemaVersion,
		ThreadID:         strings.Clone(t.ThreadID),
		ContextID:        strings.Clone(t.ContextID),
		CWD:              strings.Clone(t.CWD),
		UserID:           compactPtr(t.UserID),
		IacCodeSessionID: compactPtr(t.IacCodeSessionID),
		Execution: Execution{
			ExecutionID:         strings.Clone(t.Execution.ExecutionID),
			RosInvocationID:     strings.Clone(t.Execution.RosInvocationID),
			TaskID:              compactPtr(t.Execution.TaskID),
			LastTaskID:          compactPtr(t.Execution.LastTaskID),
			PipelineSequence:    t.Execution.PipelineSequence,
			PipelineOpenSteps:   compactStrings(t.Execution.PipelineOpenSteps),
			TextSnapshotDigests: compactStrings(t.Execution.TextSnapshotDigests),
		},
		RunOrder:             compactStrings(t.RunOrder),
		TerminalExecutionIDs: compactStrings(t.TerminalExecutionIDs),
	}
	if t.Execution.Pending != nil {
		c.Execution.Pending = make(map[string]Pending, len(t.Execution.Pending))
		for k, p := range t.Execution.Pending {
			v, _ := projection.DeepCopy(p.Value).(map[string]any)
			c.Execution.Pending[strings.Clone(k)] = Pending{Value: v, Sideband: p.Sideband}
		}
	}
	if t.RunDigests != nil {
		c.RunDigests = make(map[string]string, len(t.RunDigests))
		for k, v := range t.RunDigests {
			c.RunDigests[strings.Clone(k)] = strings.Clone(v)
		}
	}
	if t.AppliedResumeDigests != nil {
		c.AppliedResumeDigests = make([]AppliedDigest, len(t.AppliedResumeDigests))
		for i, d := range t.AppliedResumeDigests {
			c.AppliedResumeDigests[i] = AppliedDigest{
				ExecutionID: strings.Clone(d.ExecutionID),
				InterruptID: strings.Clone(d.InterruptID),
				Digest:      strings.Clone(d.Digest),
			}
		}
	}
	return c
}

func compactPtr(s *string) *string {
	if s == nil {
		return nil
	}
	v := strings.Clone(*s)
	return &v
}

// compactStrings keeps nil and empty apart: both round-trip differently
// through the JSON codec.
func compactStrings(s []string) []string {
	if s == nil {
		return nil
	}
	c := make([]string, len(s))
	for i, v := range s {
		c[i] = strings.Clone(v)
	}
	return c
}
