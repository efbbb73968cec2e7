package frame

import (
	"encoding/json"
	"strings"
)

// Kind says which member of an A2A 1.0 StreamResponse an Event came from.
type Kind string

// Stream result kinds.
const (
	KindTask           Kind = "task"
	KindStatusUpdate   Kind = "statusUpdate"
	KindArtifactUpdate Kind = "artifactUpdate"
	KindMessage        Kind = "message"
)

// Event is one decoded A2A stream result, or the task answered by GetTask,
// flattened into one lean value. It mirrors the shapes of the SDK's
// a2a.Task, a2a.TaskStatusUpdateEvent, a2a.TaskArtifactUpdateEvent and
// a2a.Message, keeping only what the adapter reads, because decoding the
// SDK's types costs about 40 µs a frame.
type Event struct {
	Kind      Kind
	TaskID    string           // statusUpdate/artifactUpdate taskId, task id, message taskId
	ContextID string           // contextId
	Status    *Status          // task and statusUpdate
	History   []Message        // task only
	Artifact  map[string]any   // artifactUpdate only
	Artifacts []map[string]any // task only (GetTask, CancelTask)
	Message   *Message         // kind message only
	// Metadata is the result's metadata object; iac-code puts its keys under
	// "iac_code". Numbers are float64 (protobuf Struct doubles). It is
	// read-only: a stream shares one map between consecutive frames whose
	// metadata bytes are identical.
	Metadata map[string]any
}

// IacCode returns metadata.iac_code, or nil.
func (e *Event) IacCode() map[string]any {
	if e == nil || e.Metadata == nil {
		return nil
	}
	m, _ := e.Metadata["iac_code"].(map[string]any)
	return m
}

// State returns the normalised task state of the event ("working",
// "input-required", ...), or "" when the event carries no status.
func (e *Event) State() string {
	if e == nil || e.Status == nil {
		return ""
	}
	return StateName(e.Status.State)
}

// Status is a task status.
type Status struct {
	State     string   `json:"state"` // wire value, e.g. "TASK_STATE_WORKING"
	Message   *Message `json:"message,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
}

// Message is an A2A message.
type Message struct {
	MessageID string         `json:"messageId"`
	ContextID string         `json:"contextId,omitempty"`
	TaskID    string         `json:"taskId,omitempty"`
	Role      string         `json:"role,omitempty"` // "ROLE_USER" / "ROLE_AGENT"
	Parts     []Part         `json:"parts"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// Text concatenates the text of all text parts.
func (m *Message) Text() string {
	if m == nil {
		return ""
	}
	if len(m.Parts) == 1 {
		return m.Parts[0].Text
	}
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Part is an A2A 1.0 part: exactly one of Text, Raw, URL, Data.
type Part struct {
	Text      string          `json:"text,omitempty"`
	Raw       string          `json:"raw,omitempty"` // base64
	URL       string          `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
}

// RPCError is the error member of a JSON-RPC response frame.
type RPCError struct {
	Code    int
	Message string
	// Data is decoded as any: iac-code sends an array (google.rpc ErrorInfo
	// list), an object (passthrough errors) or a string.
	Data any
}

// StateName normalises an A2A task state: lowercased, without the
// "task_state_" prefix, "_" replaced by "-" (TASK_STATE_INPUT_REQUIRED →
// input-required).
func StateName(s string) string {
	switch s {
	case "TASK_STATE_WORKING":
		return StateWorking
	case "TASK_STATE_INPUT_REQUIRED":
		return StateInputRequired
	case "TASK_STATE_SUBMITTED":
		return StateSubmitted
	}
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "task_state_")
	return strings.ReplaceAll(s, "_", "-")
}

// Normalised task state names.
const (
	StateSubmitted     = "submitted"
	StateWorking       = "working"
	StateInputRequired = "input-required"
	StateAuthRequired  = "auth-required"
	StateCompleted     = "completed"
	StateFailed        = "failed"
	StateCanceled      = "canceled"
	StateRejected      = "rejected"
)
