package demoagent

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// num is a metadata number written the way a protobuf Struct writes it:
// always as a double, so 3 becomes 3.0 on the wire.
type num float64

// MarshalJSON writes integral values with a ".0" suffix.
func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("0.0"), nil
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return []byte(s), nil
}

// Wire shapes of A2A 1.0 (proto-JSON, camelCase, defaults omitted). They are
// private structs rather than the SDK's types because metadata numbers must
// be written as doubles and some objects need iac-code's exact key sets.

type part struct {
	Text      string          `json:"text,omitempty"`
	Raw       string          `json:"raw,omitempty"`
	URL       string          `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
}

type message struct {
	MessageID string         `json:"messageId"`
	ContextID string         `json:"contextId,omitempty"`
	TaskID    string         `json:"taskId,omitempty"`
	Role      string         `json:"role"`
	Parts     []part         `json:"parts"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type taskStatus struct {
	State     string   `json:"state"`
	Message   *message `json:"message,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
}

type artifact struct {
	ArtifactID string         `json:"artifactId"`
	Name       string         `json:"name"`
	Parts      []part         `json:"parts"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

type taskObj struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    taskStatus     `json:"status"`
	Artifacts []artifact     `json:"artifacts,omitempty"`
	History   []message      `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type statusUpdate struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    taskStatus     `json:"status"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type artifactUpdate struct {
	TaskID    string   `json:"taskId"`
	ContextID string   `json:"contextId"`
	Artifact  artifact `json:"artifact"`
	LastChunk bool     `json:"lastChunk"`
}

// streamResult is the A2A 1.0 StreamResponse: exactly one member is set.
type streamResult struct {
	Task           *taskObj        `json:"task,omitempty"`
	Message        *message        `json:"message,omitempty"`
	StatusUpdate   *statusUpdate   `json:"statusUpdate,omitempty"`
	ArtifactUpdate *artifactUpdate `json:"artifactUpdate,omitempty"`
}

// Task states (A2A 1.0 enum names) and their proto numbers, which iac-code
// uses in message ids ("<T>-2") and in the terminal-state error text.
const (
	stateSubmitted     = "TASK_STATE_SUBMITTED"
	stateWorking       = "TASK_STATE_WORKING"
	stateCompleted     = "TASK_STATE_COMPLETED"
	stateFailed        = "TASK_STATE_FAILED"
	stateCanceled      = "TASK_STATE_CANCELED"
	stateInputRequired = "TASK_STATE_INPUT_REQUIRED"
)

var stateNumber = map[string]int{
	stateSubmitted: 1, stateWorking: 2, stateCompleted: 3, stateFailed: 4,
	stateCanceled: 5, stateInputRequired: 6, "TASK_STATE_REJECTED": 7, "TASK_STATE_AUTH_REQUIRED": 8,
}

func isTerminal(s string) bool {
	return s == stateCompleted || s == stateFailed || s == stateCanceled || s == "TASK_STATE_REJECTED"
}

// stopsStream reports whether a subscription ends after a frame in state s.
func stopsStream(s string) bool {
	return isTerminal(s) || s == stateInputRequired || s == "TASK_STATE_AUTH_REQUIRED"
}

func agentText(taskID, contextID, id, text string) *message {
	return &message{MessageID: id, ContextID: contextID, TaskID: taskID, Role: "ROLE_AGENT", Parts: []part{{Text: text}}}
}

// JSON-RPC 2.0.

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// JSON-RPC and A2A error codes (upstream.md §6.1).
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethod         = -32601
	codeParams         = -32602
	codeInternal       = -32603
	codeTaskNotFound   = -32001
	codeNotCancelable  = -32002
	codeVersion        = -32009
)

var errorReason = map[int]string{
	codeParse: "PARSE_ERROR", codeInvalidRequest: "INVALID_REQUEST", codeMethod: "METHOD_NOT_FOUND",
	codeParams: "INVALID_PARAMS", codeInternal: "INTERNAL_ERROR", codeTaskNotFound: "TASK_NOT_FOUND",
	codeNotCancelable: "TASK_NOT_CANCELABLE", codeVersion: "VERSION_NOT_SUPPORTED",
}

// newRPCError builds a standard error whose data is the ErrorInfo array.
func newRPCError(code int, msg string) *rpcError {
	return &rpcError{Code: code, Message: msg, Data: []any{map[string]any{
		"@type":    "type.googleapis.com/google.rpc.ErrorInfo",
		"reason":   errorReason[code],
		"domain":   "a2a-protocol.org",
		"metadata": map[string]any{},
	}}}
}

// passthroughError keeps an object data, as iac-code does for errors a
// client must act on.
func passthroughError(code int, msg string, data map[string]any) *rpcError {
	return &rpcError{Code: code, Message: msg, Data: data}
}

func rpcResponse(id json.RawMessage, result any) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
	if err != nil {
		return rpcErrorBody(id, newRPCError(codeInternal, "Internal error"))
	}
	return b
}

// rpcFrame wraps an already encoded result for one subscriber's request id.
func rpcFrame(id json.RawMessage, result []byte) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b := make([]byte, 0, len(result)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

func rpcErrorBody(id json.RawMessage, e *rpcError) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *rpcError       `json:"error"`
	}{"2.0", id, e})
	return b
}
