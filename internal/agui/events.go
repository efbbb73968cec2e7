package agui

import "encoding/json"

// EventType is the AG-UI 1.0 event discriminator.
type EventType string

// The event types this server emits (a subset of the 31 AG-UI 1.0 types).
const (
	TypeRunStarted              EventType = "RUN_STARTED"
	TypeRunFinished             EventType = "RUN_FINISHED"
	TypeRunError                EventType = "RUN_ERROR"
	TypeStepStarted             EventType = "STEP_STARTED"
	TypeStepFinished            EventType = "STEP_FINISHED"
	TypeTextMessageStart        EventType = "TEXT_MESSAGE_START"
	TypeTextMessageContent      EventType = "TEXT_MESSAGE_CONTENT"
	TypeTextMessageEnd          EventType = "TEXT_MESSAGE_END"
	TypeReasoningStart          EventType = "REASONING_START"
	TypeReasoningMessageStart   EventType = "REASONING_MESSAGE_START"
	TypeReasoningMessageContent EventType = "REASONING_MESSAGE_CONTENT"
	TypeReasoningMessageEnd     EventType = "REASONING_MESSAGE_END"
	TypeReasoningEnd            EventType = "REASONING_END"
	TypeToolCallStart           EventType = "TOOL_CALL_START"
	TypeToolCallArgs            EventType = "TOOL_CALL_ARGS"
	TypeToolCallEnd             EventType = "TOOL_CALL_END"
	TypeToolCallResult          EventType = "TOOL_CALL_RESULT"
	TypeActivitySnapshot        EventType = "ACTIVITY_SNAPSHOT"
	TypeCustom                  EventType = "CUSTOM"
)

// Event is one AG-UI event. The timestamp is not part of the value: the SSE
// writer stamps every event when it is written, so the mapper stays pure.
type Event interface {
	EventType() EventType
}

// RunStarted opens a run. ParentRunID is omitted when empty.
type RunStarted struct {
	ThreadID    string `json:"threadId"`
	RunID       string `json:"runId"`
	ParentRunID string `json:"parentRunId,omitempty"`
}

// RunFinished closes a run with a success or interrupt outcome.
type RunFinished struct {
	ThreadID string       `json:"threadId"`
	RunID    string       `json:"runId"`
	Outcome  Outcome      `json:"outcome"`
	Usage    []TokenUsage `json:"usage,omitempty"`
}

// RunError ends a run with an error. AG-UI 1.0 rule: no threadId or runId.
// Field and Reason, ours, locate a refused member of the request (a
// resume payload, protocol.md §5.7); they travel in the event's metadata,
// the one member AG-UI 1.0 allows every event beyond its own.
type RunError struct {
	Message string       `json:"message"`
	Code    string       `json:"code"`
	Usage   []TokenUsage `json:"usage,omitempty"`
	Field   string       `json:"-"`
	Reason  string       `json:"-"`
}

// Outcome is RUN_FINISHED.outcome: type "success" or "interrupt".
type Outcome struct {
	Type       string      `json:"type"`
	Interrupts []Interrupt `json:"interrupts,omitempty"`
}

// Outcome types.
const (
	OutcomeSuccess   = "success"
	OutcomeInterrupt = "interrupt"
)

// Interrupt is one AG-UI 1.0 interrupt. Message and ToolCallID are omitted
// when empty; ResponseSchema is always a JSON object.
type Interrupt struct {
	ID             string         `json:"id"`
	Reason         string         `json:"reason"`
	Message        string         `json:"message,omitempty"`
	ToolCallID     string         `json:"toolCallId,omitempty"`
	ResponseSchema map[string]any `json:"responseSchema"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}

// TokenUsage is one AG-UI 1.0 usage entry. Provider and Model are omitted
// when empty; the counts are always present.
type TokenUsage struct {
	Provider          string `json:"provider,omitempty"`
	Model             string `json:"model,omitempty"`
	InputTokens       int64  `json:"inputTokens"`
	OutputTokens      int64  `json:"outputTokens"`
	TotalTokens       int64  `json:"totalTokens"`
	CachedInputTokens int64  `json:"cachedInputTokens"`
}

// StepStarted opens a step.
type StepStarted struct {
	StepName string `json:"stepName"`
}

// StepFinished closes a step.
type StepFinished struct {
	StepName string `json:"stepName"`
}

// TextMessageStart opens an assistant text message.
type TextMessageStart struct {
	MessageID string `json:"messageId"`
	Role      string `json:"role"` // always "assistant"
}

// TextMessageContent is one text delta.
type TextMessageContent struct {
	MessageID string `json:"messageId"`
	Delta     string `json:"delta"`
}

// TextMessageEnd closes a text message.
type TextMessageEnd struct {
	MessageID string `json:"messageId"`
}

// ReasoningStart opens a reasoning span.
type ReasoningStart struct {
	MessageID string `json:"messageId"`
}

// ReasoningMessageStart opens a reasoning message; Role is always "reasoning".
type ReasoningMessageStart struct {
	MessageID string `json:"messageId"`
	Role      string `json:"role"`
}

// ReasoningMessageContent is one reasoning delta.
type ReasoningMessageContent struct {
	MessageID string `json:"messageId"`
	Delta     string `json:"delta"`
}

// ReasoningMessageEnd closes a reasoning message.
type ReasoningMessageEnd struct {
	MessageID string `json:"messageId"`
}

// ReasoningEnd closes a reasoning span.
type ReasoningEnd struct {
	MessageID string `json:"messageId"`
}

// ToolCallStart opens a tool call. ParentMessageID is omitted when empty.
type ToolCallStart struct {
	ToolCallID      string `json:"toolCallId"`
	ToolCallName    string `json:"toolCallName"`
	ParentMessageID string `json:"parentMessageId,omitempty"`
}

// ToolCallArgs carries the tool arguments as compact JSON text.
type ToolCallArgs struct {
	ToolCallID string `json:"toolCallId"`
	Delta      string `json:"delta"`
}

// ToolCallEnd closes a tool call.
type ToolCallEnd struct {
	ToolCallID string `json:"toolCallId"`
}

// ToolCallResult is the result of a tool call; Role is always "tool".
type ToolCallResult struct {
	MessageID  string `json:"messageId"`
	ToolCallID string `json:"toolCallId"`
	Content    string `json:"content"`
	Role       string `json:"role"`
}

// ActivitySnapshot carries a pipeline recovery snapshot.
type ActivitySnapshot struct {
	MessageID    string         `json:"messageId"`
	ActivityType string         `json:"activityType"`
	Content      map[string]any `json:"content"`
	Replace      bool           `json:"replace"`
}

// Custom is a namespaced custom event. Value is always written, even when
// it is JSON null (AG-UI 1.0 requires the key).
type Custom struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// RawJSON lets a Custom value or snapshot carry pre-encoded JSON untouched.
type RawJSON = json.RawMessage

func (*RunStarted) EventType() EventType              { return TypeRunStarted }
func (*RunFinished) EventType() EventType             { return TypeRunFinished }
func (*RunError) EventType() EventType                { return TypeRunError }
func (*StepStarted) EventType() EventType             { return TypeStepStarted }
func (*StepFinished) EventType() EventType            { return TypeStepFinished }
func (*TextMessageStart) EventType() EventType        { return TypeTextMessageStart }
func (*TextMessageContent) EventType() EventType      { return TypeTextMessageContent }
func (*TextMessageEnd) EventType() EventType          { return TypeTextMessageEnd }
func (*ReasoningStart) EventType() EventType          { return TypeReasoningStart }
func (*ReasoningMessageStart) EventType() EventType   { return TypeReasoningMessageStart }
func (*ReasoningMessageContent) EventType() EventType { return TypeReasoningMessageContent }
func (*ReasoningMessageEnd) EventType() EventType     { return TypeReasoningMessageEnd }
func (*ReasoningEnd) EventType() EventType            { return TypeReasoningEnd }
func (*ToolCallStart) EventType() EventType           { return TypeToolCallStart }
func (*ToolCallArgs) EventType() EventType            { return TypeToolCallArgs }
func (*ToolCallEnd) EventType() EventType             { return TypeToolCallEnd }
func (*ToolCallResult) EventType() EventType          { return TypeToolCallResult }
func (*ActivitySnapshot) EventType() EventType        { return TypeActivitySnapshot }
func (*Custom) EventType() EventType                  { return TypeCustom }
