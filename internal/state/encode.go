package state

import (
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/iac-code-agui/iac-code-agui/internal/projection"
)

// ErrInvalidDocument is wrapped by Save when it refuses a document that could
// not be loaded back (wrong schemaVersion, empty or non-UTF-8 threadId, or a
// field that breaks a §8.4 rule).
var ErrInvalidDocument = errors.New("state: refusing to save an invalid thread document")

// The wire types list their fields in sorted key order, because
// encoding/json writes struct fields in declaration order and the original
// writes sort_keys=True at every level (maps are sorted by encoding/json).
type wireThread struct {
	AppliedResumeDigests []wireApplied     `json:"appliedResumeDigests"`
	ContextID            string            `json:"contextId"`
	CWD                  string            `json:"cwd"`
	Execution            wireExecution     `json:"execution"`
	IacCodeSessionID     *string           `json:"iacCodeSessionId"`
	RunDigests           map[string]string `json:"runDigests"`
	RunOrder             []string          `json:"runOrder"`
	SchemaVersion        int               `json:"schemaVersion"`
	TerminalExecutionIDs []string          `json:"terminalExecutionIds"`
	ThreadID             string            `json:"threadId"`
	UserID               *string           `json:"userId"`
}

type wireExecution struct {
	ExecutionID         string                 `json:"executionId"`
	LastTaskID          *string                `json:"lastTaskId"`
	Pending             map[string]wirePending `json:"pending"`
	PipelineOpenSteps   []string               `json:"pipelineOpenSteps"`
	PipelineSequence    int64                  `json:"pipelineSequence"`
	RosInvocationID     string                 `json:"rosInvocationId"`
	TaskID              *string                `json:"taskId"`
	TextSnapshotDigests []string               `json:"textSnapshotDigests"`
}

type wirePending struct {
	Sideband bool           `json:"sideband"`
	Value    map[string]any `json:"value"`
}

type wireApplied struct {
	Digest      string `json:"digest"`
	ExecutionID string `json:"executionId"`
	InterruptID string `json:"interruptId"`
}

// encodeThread validates and normalises t (sets sorted and de-duplicated,
// filtered digests, projected pending values) and renders it like Python's
// json.dumps(indent=2, sort_keys=True, ensure_ascii=False) plus "\n".
func encodeThread(t *Thread) ([]byte, error) {
	if err := validateForSave(t); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidDocument, err.Error())
	}
	b, err := appendWire(make([]byte, 0, 1024), wireOf(t))
	if err != nil {
		// For example NaN or an unsupported type inside a pending value.
		return nil, fmt.Errorf("%w: %s", ErrInvalidDocument, err.Error())
	}
	if len(b) > MaxDocumentSize {
		// Load would refuse it and make the thread unavailable for good.
		return nil, fmt.Errorf("%w: document exceeds %d bytes", ErrInvalidDocument, MaxDocumentSize)
	}
	return b, nil
}

// wireOf builds the normalised wire document of t. It is apart from
// encodeThread so that its 1 KiB frame has returned before encoding/json
// nests: a save during admission otherwise came close enough to 8 KiB of
// stack to double it now and then, for as long as the run's stream stays
// open (a stack is halved only when less than a quarter is in use).
//
//go:noinline
func wireOf(t *Thread) *wireThread {
	e := &t.Execution
	w := &wireThread{
		AppliedResumeDigests: make([]wireApplied, 0, len(t.AppliedResumeDigests)),
		ContextID:            t.ContextID,
		CWD:                  t.CWD,
		IacCodeSessionID:     t.IacCodeSessionID,
		RunDigests:           make(map[string]string, len(t.RunDigests)),
		SchemaVersion:        SchemaVersion,
		TerminalExecutionIDs: make([]string, 0, len(t.TerminalExecutionIDs)),
		ThreadID:             t.ThreadID,
		UserID:               t.UserID,
		Execution: wireExecution{
			ExecutionID:         e.ExecutionID,
			LastTaskID:          e.LastTaskID,
			Pending:             make(map[string]wirePending, len(e.Pending)),
			PipelineOpenSteps:   sortedSet(slices.Clone(e.PipelineOpenSteps)),
			PipelineSequence:    e.PipelineSequence,
			RosInvocationID:     e.RosInvocationID,
			TaskID:              e.TaskID,
			TextSnapshotDigests: sortedSet(slices.Clone(e.TextSnapshotDigests)),
		},
	}
	for _, a := range dedupeApplied(slices.Clone(t.AppliedResumeDigests)) {
		w.AppliedResumeDigests = append(w.AppliedResumeDigests, a2w(a))
	}
	for k, v := range t.RunDigests {
		if k != "" && v != "" {
			w.RunDigests[k] = v
		}
	}
	w.RunOrder = []string{}
	for _, id := range t.runOrder() {
		if _, ok := w.RunDigests[id]; ok {
			w.RunOrder = append(w.RunOrder, id)
		}
	}
	for _, id := range t.TerminalExecutionIDs {
		if id != "" {
			w.TerminalExecutionIDs = append(w.TerminalExecutionIDs, id)
		}
	}
	w.TerminalExecutionIDs = sortedSet(w.TerminalExecutionIDs)
	for id, p := range e.Pending {
		w.Execution.Pending[id] = wirePending{Sideband: p.Sideband, Value: projection.Project(p.Value)}
	}
	return w
}

func a2w(a AppliedDigest) wireApplied {
	return wireApplied{Digest: a.Digest, ExecutionID: a.ExecutionID, InterruptID: a.InterruptID}
}

// validateForSave refuses what decodeThread would reject, so a successful
// Save never leaves a thread that cannot be loaded.
func validateForSave(t *Thread) error {
	switch {
	case t == nil:
		return errors.New("nil document")
	case t.SchemaVersion != SchemaVersion:
		return errors.New("unsupported schemaVersion")
	case t.ThreadID == "" || !utf8.ValidString(t.ThreadID):
		return errors.New("threadId is invalid")
	case t.ContextID == "":
		return errors.New("contextId is required")
	case t.CWD == "":
		return errors.New("cwd is required")
	case t.Execution.ExecutionID == "":
		return errors.New("executionId is required")
	case t.Execution.RosInvocationID == "":
		return errors.New("rosInvocationId is required")
	case t.Execution.PipelineSequence < 0:
		return errors.New("pipelineSequence is invalid")
	case slices.Contains(t.Execution.PipelineOpenSteps, ""):
		return errors.New("pipelineOpenSteps is invalid")
	case slices.ContainsFunc(t.Execution.TextSnapshotDigests, func(s string) bool { return !isDigest(s) }):
		return errors.New("textSnapshotDigests is invalid")
	}
	for id, p := range t.Execution.Pending {
		if p.Value == nil {
			return errors.New("pending entry is invalid")
		}
		if inputID, ok := p.Value["inputId"].(string); !ok || inputID != id {
			return errors.New("pending inputId does not match its key")
		}
	}
	for _, a := range t.AppliedResumeDigests {
		if a.ExecutionID == "" || a.InterruptID == "" || a.Digest == "" {
			return errors.New("appliedResumeDigests entry is invalid")
		}
	}
	return nil
}

// sortedSet sorts s in place and drops duplicates; it never returns nil so
// that empty lists are written as [].
func sortedSet(s []string) []string {
	if s == nil {
		return []string{}
	}
	slices.Sort(s)
	return slices.Compact(s)
}
