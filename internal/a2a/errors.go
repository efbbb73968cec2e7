package a2a

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors; compare with errors.Is.
var (
	// ErrProtocol marks an answer that breaks the JSON-RPC or A2A contract
	// (a frame with neither result nor error, undecodable JSON, an
	// unexpected content type or status value).
	ErrProtocol = errors.New("a2a: protocol error")
	// ErrFrameTooLarge is returned when one SSE frame (or a JSON body)
	// exceeds the configured maximum; the stream is closed.
	ErrFrameTooLarge = errors.New("a2a: frame exceeds the maximum size")
	// ErrIdleTimeout is returned when no byte arrived for the idle timeout.
	ErrIdleTimeout = errors.New("a2a: upstream idle timeout")
	// ErrStreamClosed is returned by Next after Close.
	ErrStreamClosed = errors.New("a2a: stream closed")
	// ErrNotFound is the 404 of GET /iac-code/pipeline/state.
	ErrNotFound = errors.New("a2a: pipeline state not found")
	// ErrSessionUnavailable is the 404 of ensure-restored.
	ErrSessionUnavailable = errors.New("a2a: session not available")
	// ErrBackupNotReady is the retryable 409 SESSION_BACKUP_NOT_READY of
	// ensure-restored.
	ErrBackupNotReady = errors.New("a2a: session backup not ready")
)

// CodeSessionBackupNotReady is the error code iac-code uses while a session
// backup is still synchronising.
const CodeSessionBackupNotReady = "SESSION_BACKUP_NOT_READY"

// JSON-RPC error codes used by iac-code (upstream.md §6.1).
const (
	CodeParseError          = -32700
	CodeInvalidRequest      = -32600
	CodeMethodNotFound      = -32601
	CodeInvalidParams       = -32602
	CodeInternalError       = -32603
	CodeTaskNotFound        = -32001
	CodeTaskNotCancelable   = -32002
	CodeUnsupportedOp       = -32004
	CodeVersionNotSupported = -32009
)

// RPCError is a JSON-RPC error answered by the upstream, either as a plain
// JSON body or as an SSE frame.
type RPCError struct {
	Code    int
	Message string
	// Data is decoded as any: iac-code sends an array (google.rpc ErrorInfo
	// list), an object (passthrough errors) or a string.
	Data any
}

// Error implements error. Data is left out: it may echo request content.
func (e *RPCError) Error() string {
	return "a2a: JSON-RPC error " + strconv.Itoa(e.Code) + ": " + e.Message
}

// BackupNotReady reports whether Data is an object with code
// SESSION_BACKUP_NOT_READY and retryable true.
func (e *RPCError) BackupNotReady() bool {
	if e == nil {
		return false
	}
	m, ok := e.Data.(map[string]any)
	if !ok {
		return false
	}
	return isBackupNotReady(m)
}

func isBackupNotReady(m map[string]any) bool {
	code, _ := m["code"].(string)
	retry, _ := m["retryable"].(bool)
	return code == CodeSessionBackupNotReady && retry
}

// HTTPError is a non-2xx HTTP answer.
type HTTPError struct {
	StatusCode int
	Body       string // the first 4 KiB of the body
}

// Error implements error. The body is kept out of the message because it
// may echo request content; read Body explicitly.
func (e *HTTPError) Error() string {
	return "a2a: upstream HTTP status " + strconv.Itoa(e.StatusCode)
}

func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}
