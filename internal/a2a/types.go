package a2a

import (
	"encoding/json"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a/frame"
)

// The decoded values are those of package frame, re-exported so callers
// need only this package.
type (
	// Kind says which member of an A2A 1.0 StreamResponse an Event came from.
	Kind = frame.Kind
	// Event is one decoded A2A stream result, or the task answered by
	// GetTask, flattened into one lean value (see frame.Event).
	Event = frame.Event
	// Status is a task status.
	Status = frame.Status
	// Message is an A2A message.
	Message = frame.Message
	// Part is an A2A 1.0 part: exactly one of Text, Raw, URL, Data.
	Part = frame.Part
)

// Stream result kinds.
const (
	KindTask           = frame.KindTask
	KindStatusUpdate   = frame.KindStatusUpdate
	KindArtifactUpdate = frame.KindArtifactUpdate
	KindMessage        = frame.KindMessage
)

// Role values.
const (
	RoleUser  = "ROLE_USER"
	RoleAgent = "ROLE_AGENT"
)

// StateName normalises an A2A task state: lowercased, without the
// "task_state_" prefix, "_" replaced by "-" (TASK_STATE_INPUT_REQUIRED →
// input-required).
func StateName(s string) string { return frame.StateName(s) }

// Normalised task state names.
const (
	StateSubmitted     = frame.StateSubmitted
	StateWorking       = frame.StateWorking
	StateInputRequired = frame.StateInputRequired
	StateAuthRequired  = frame.StateAuthRequired
	StateCompleted     = frame.StateCompleted
	StateFailed        = frame.StateFailed
	StateCanceled      = frame.StateCanceled
	StateRejected      = frame.StateRejected
)

// PipelineState is the answer of GET /iac-code/pipeline/state: a recovery
// snapshot and the journal envelopes after the requested sequence.
type PipelineState struct {
	Snapshot map[string]any   `json:"snapshot"`
	Events   []map[string]any `json:"events"`
}

// Int reads an integral JSON number: int, int64, json.Number or an
// integral float64 (protobuf Struct numbers arrive as 3.0). Fractions,
// booleans and strings are rejected.
func Int(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n != n || n > 9.007199254740992e15 || n < -9.007199254740992e15 || n != float64(int64(n)) {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		if f, err := n.Float64(); err == nil {
			return Int(f)
		}
	}
	return 0, false
}
