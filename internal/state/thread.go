package state

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/projection"
)

// SchemaVersion is the only thread document version this package reads or
// writes.
const SchemaVersion = 1

// Thread is the persisted binding of one AG-UI thread (protocol.md §8.3).
// Absent optional identities are nil pointers and are written as JSON null,
// as the original does.
type Thread struct {
	SchemaVersion    int               `json:"schemaVersion"`
	ThreadID         string            `json:"threadId"`
	ContextID        string            `json:"contextId"`
	CWD              string            `json:"cwd"`
	UserID           *string           `json:"userId"`
	IacCodeSessionID *string           `json:"iacCodeSessionId"`
	Execution        Execution         `json:"execution"`
	RunDigests       map[string]string `json:"runDigests"`
	// RunOrder lists the run ids of RunDigests oldest first (Ours, §6):
	// it decides which runs RecordRun forgets.
	RunOrder             []string        `json:"runOrder"`
	AppliedResumeDigests []AppliedDigest `json:"appliedResumeDigests"`
	TerminalExecutionIDs []string        `json:"terminalExecutionIds"`
}

// Execution is the thread's current execution and its pipeline cursor.
type Execution struct {
	ExecutionID         string             `json:"executionId"`
	RosInvocationID     string             `json:"rosInvocationId"`
	TaskID              *string            `json:"taskId"`
	LastTaskID          *string            `json:"lastTaskId"`
	PipelineSequence    int64              `json:"pipelineSequence"`
	PipelineOpenSteps   []string           `json:"pipelineOpenSteps"`
	TextSnapshotDigests []string           `json:"textSnapshotDigests"`
	Pending             map[string]Pending `json:"pending"`
}

// Pending is one committed, unanswered interrupt. Value is the persisted
// input projection (§5.1); numbers in a loaded Value are json.Number so that
// their literal text survives a load/save cycle unchanged.
type Pending struct {
	Value    map[string]any `json:"value"`
	Sideband bool           `json:"sideband"`
}

// AppliedDigest records the digest of an accepted answer (§5.9, §5.10).
type AppliedDigest struct {
	ExecutionID string `json:"executionId"`
	InterruptID string `json:"interruptId"`
	Digest      string `json:"digest"`
}

// ContextIDFor derives the A2A context id bound to a thread (§3.5):
// "agui-" and the first 40 hex characters of SHA-256 of the UTF-8 thread id.
func ContextIDFor(threadID string) string {
	sum := sha256.Sum256([]byte(threadID))
	return "agui-" + hex.EncodeToString(sum[:])[:40]
}

// NewThread builds the binding created by the first request on a thread
// (§3.5), with empty (non-nil) collections.
func NewThread(threadID, cwd string, userID *string, executionID, rosInvocationID string) *Thread {
	return &Thread{
		SchemaVersion: SchemaVersion,
		ThreadID:      threadID,
		ContextID:     ContextIDFor(threadID),
		CWD:           cwd,
		UserID:        clonePtr(userID),
		Execution: Execution{
			ExecutionID:         executionID,
			RosInvocationID:     rosInvocationID,
			PipelineOpenSteps:   []string{},
			TextSnapshotDigests: []string{},
			Pending:             map[string]Pending{},
		},
		RunDigests:           map[string]string{},
		RunOrder:             []string{},
		AppliedResumeDigests: []AppliedDigest{},
		TerminalExecutionIDs: []string{},
	}
}

// Clone returns a deep copy, so a caller can roll back after a failed Save.
func (t *Thread) Clone() *Thread {
	if t == nil {
		return nil
	}
	c := *t
	c.UserID = clonePtr(t.UserID)
	c.IacCodeSessionID = clonePtr(t.IacCodeSessionID)
	c.Execution.TaskID = clonePtr(t.Execution.TaskID)
	c.Execution.LastTaskID = clonePtr(t.Execution.LastTaskID)
	c.Execution.PipelineOpenSteps = slices.Clone(t.Execution.PipelineOpenSteps)
	c.Execution.TextSnapshotDigests = slices.Clone(t.Execution.TextSnapshotDigests)
	if t.Execution.Pending != nil {
		c.Execution.Pending = make(map[string]Pending, len(t.Execution.Pending))
		for k, p := range t.Execution.Pending {
			v, _ := projection.DeepCopy(p.Value).(map[string]any)
			c.Execution.Pending[k] = Pending{Value: v, Sideband: p.Sideband}
		}
	}
	if t.RunDigests != nil {
		c.RunDigests = make(map[string]string, len(t.RunDigests))
		for k, v := range t.RunDigests {
			c.RunDigests[k] = v
		}
	}
	c.RunOrder = slices.Clone(t.RunOrder)
	c.AppliedResumeDigests = slices.Clone(t.AppliedResumeDigests)
	c.TerminalExecutionIDs = slices.Clone(t.TerminalExecutionIDs)
	return &c
}

// MarkTerminal ends the current execution (§8.10): its id joins
// terminalExecutionIds, lastTaskId takes the task id and taskId becomes nil.
// Like the original, a nil or empty task id keeps the previous lastTaskId.
func (t *Thread) MarkTerminal() {
	t.addTerminal(t.Execution.ExecutionID)
	if id := t.Execution.TaskID; id != nil && *id != "" {
		t.Execution.LastTaskID = clonePtr(id)
	}
	t.Execution.TaskID = nil
}

// Rotate starts a new execution for the next normal turn (§8.10). The old
// execution becomes terminal when it still had a task (as in the original);
// contextId, iacCodeSessionId, lastTaskId and the digests are kept.
func (t *Thread) Rotate(newExecutionID, rosInvocationID string) {
	if t.Execution.TaskID != nil {
		t.addTerminal(t.Execution.ExecutionID)
	}
	t.Execution.ExecutionID = newExecutionID
	t.Execution.RosInvocationID = rosInvocationID
	t.Execution.TaskID = nil
	t.Execution.PipelineSequence = 0
	t.Execution.PipelineOpenSteps = []string{}
	t.Execution.TextSnapshotDigests = []string{}
	t.Execution.Pending = map[string]Pending{}
}

// AppliedDigest returns the digest recorded for an accepted answer.
func (t *Thread) AppliedDigest(executionID, interruptID string) (string, bool) {
	for _, a := range t.AppliedResumeDigests {
		if a.ExecutionID == executionID && a.InterruptID == interruptID {
			return a.Digest, true
		}
	}
	return "", false
}

// AddApplied records (or replaces) the digest of an accepted answer, keeping
// the list sorted by (executionId, interruptId).
func (t *Thread) AddApplied(executionID, interruptID, digest string) {
	for i, a := range t.AppliedResumeDigests {
		if a.ExecutionID == executionID && a.InterruptID == interruptID {
			t.AppliedResumeDigests[i].Digest = digest
			return
		}
	}
	t.AppliedResumeDigests = append(t.AppliedResumeDigests, AppliedDigest{executionID, interruptID, digest})
	sortApplied(t.AppliedResumeDigests)
}

func (t *Thread) addTerminal(id string) {
	if id == "" {
		return
	}
	if !slices.Contains(t.TerminalExecutionIDs, id) {
		t.TerminalExecutionIDs = append(t.TerminalExecutionIDs, id)
		slices.Sort(t.TerminalExecutionIDs)
	}
}

func sortApplied(a []AppliedDigest) {
	slices.SortStableFunc(a, func(x, y AppliedDigest) int {
		if c := strings.Compare(x.ExecutionID, y.ExecutionID); c != 0 {
			return c
		}
		if c := strings.Compare(x.InterruptID, y.InterruptID); c != 0 {
			return c
		}
		return strings.Compare(x.Digest, y.Digest)
	})
}

func clonePtr(s *string) *string {
	if s == nil {
		return nil
	}
	v := *s
	return &v
}
