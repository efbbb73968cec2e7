package agui

import "encoding/json"

// RunAgentInput is the AG-UI 1.0 request body of POST /.
//
// Raw JSON is kept for the fields the adapter only forwards or inspects
// later (state, tools, context, forwardedProps), so that nothing is
// reinterpreted on the way.
type RunAgentInput struct {
	ThreadID        string            `json:"threadId"`
	RunID           string            `json:"runId"`
	ParentRunID     string            `json:"parentRunId,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	State           json.RawMessage   `json:"state"`
	Messages        []Message         `json:"messages"`
	Tools           []json.RawMessage `json:"tools"`
	Context         []json.RawMessage `json:"context"`
	ForwardedProps  json.RawMessage   `json:"forwardedProps"`
	// Resume is nil when the request carries no "resume" key.
	Resume []ResumeEntry `json:"resume,omitempty"`
	// HasResume is true when the request carried a "resume" key (even []).
	HasResume bool `json:"-"`
}

// Message is one AG-UI 1.0 message (a union discriminated by Role).
// Content is kept raw: a string for most roles, a string or a list of
// content parts for user and tool messages.
type Message struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content,omitempty"`
}

// ContentPart is one part of a user message's content list.
type ContentPart struct {
	Type     string         `json:"type"`
	Text     *string        `json:"text,omitempty"`
	Source   *PartSource    `json:"source,omitempty"`
	ID       string         `json:"id,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// PartSource is where a media part's bytes come from: type "data" (inline
// base64), "url" or "file".
type PartSource struct {
	Type     string `json:"type"`
	Value    string `json:"value"`
	MimeType string `json:"mimeType,omitempty"`
	Provider string `json:"provider,omitempty"`
}

// ResumeEntry answers one interrupt. Payload is nil when absent (a JSON
// null payload is treated as absent).
type ResumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"` // "resolved" or "cancelled"
	Payload     json.RawMessage `json:"payload,omitempty"`
	Metadata    map[string]any  `json:"metadata,omitempty"`
}

// Resume statuses.
const (
	ResumeResolved  = "resolved"
	ResumeCancelled = "cancelled"
)
