package adapter

import (
	"errors"
	"net/http"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// Error is a public adapter error: a stable code, an English message from
// the i18n catalogue (translated at the edge), and the HTTP status used when
// it is returned before the stream starts.
type Error struct {
	Code   string
	Msg    string
	Status int
	// Details, ours, sent next to code and message before the stream
	// (protocol.md §2.4); nil for most errors.
	Details *Details
}

// Details locate a refusal: Field is a JSON pointer into the request and
// Reason a short English rule; Hint, an English catalogue message
// (translated at the edge), says what to do; Pending lists the thread's
// pending interrupts (RESUME_REQUIRED).
type Details struct {
	Field   string
	Reason  string
	Hint    string
	Pending []agui.Interrupt
}

// with returns a copy of e carrying d; the shared error values stay bare.
func (e *Error) with(d *Details) *Error {
	c := *e
	c.Details = d
	return &c
}

func (e *Error) Error() string { return e.Code + ": " + e.Msg }

// Public error codes (protocol reference, "Persistence, disconnection and
// errors", and protocol.md §2.6–§2.7).
const (
	CodeInvalidInput           = "INVALID_INPUT"
	CodeStateUnavailable       = "STATE_UNAVAILABLE"
	CodeExecutionLost          = "EXECUTION_LOST"
	CodeDuplicateRunID         = "DUPLICATE_RUN_ID"
	CodeRunIDConflict          = "RUN_ID_CONFLICT"
	CodeThreadBusy             = "THREAD_BUSY"
	CodeThreadBindingConflict  = "THREAD_BINDING_CONFLICT"
	CodeResumeRequired         = "RESUME_REQUIRED"
	CodeIncompleteResume       = "INCOMPLETE_RESUME"
	CodeUnknownInterrupt       = "UNKNOWN_INTERRUPT"
	CodeResumePayloadInvalid   = "RESUME_PAYLOAD_INVALID"
	CodeResumeAlreadyApplied   = "RESUME_ALREADY_APPLIED"
	CodeStatePersistenceFailed = "STATE_PERSISTENCE_FAILED"
	CodeA2AUnavailable         = "A2A_UNAVAILABLE"
	CodeA2AProtocolError       = "A2A_PROTOCOL_ERROR"
	CodeA2AExecutionFailed     = "A2A_EXECUTION_FAILED"
	CodeCancelled              = "CANCELLED"
	CodeSessionBackupNotReady  = "SESSION_BACKUP_NOT_READY"
	CodeExecutionNotFound      = "EXECUTION_NOT_FOUND"
	// CodeOwnerUnavailable ends a run whose thread another replica took
	// over while it ran (its writes are fenced); ours, as the server's
	// 503 of the same name.
	CodeOwnerUnavailable = "OWNER_UNAVAILABLE"
	// CodeShuttingDown ends a run the server stopped because it shuts
	// down (SIGTERM); ours, retryable (docs/decisions.md).
	CodeShuttingDown = "ADAPTER_SHUTTING_DOWN"
)

func newErr(status int, code, msg string) *Error { return &Error{Code: code, Msg: msg, Status: status} }

// runErr builds an error that is only ever reported as RUN_ERROR.
func runErr(code, msg string) *Error { return &Error{Code: code, Msg: msg, Status: http.StatusOK} }

// Admission errors (protocol.md §2.6).
var (
	errStateUnavailable  = newErr(http.StatusServiceUnavailable, CodeStateUnavailable, i18n.MsgStateUnavailable)
	errExecutionLost     = newErr(http.StatusConflict, CodeExecutionLost, i18n.MsgExecutionToResumeLost)
	errDuplicateRunID    = newErr(http.StatusConflict, CodeDuplicateRunID, i18n.MsgRunIDUsed)
	errRunIDConflict     = newErr(http.StatusConflict, CodeRunIDConflict, i18n.MsgRunIDUsed)
	errThreadBusy        = newErr(http.StatusConflict, CodeThreadBusy, i18n.MsgThreadBusy)
	errBindingConflict   = newErr(http.StatusConflict, CodeThreadBindingConflict, i18n.MsgThreadBindingConflict)
	errResumeMismatch    = newErr(http.StatusConflict, CodeExecutionLost, i18n.MsgResumeMismatch)
	errResumeRequired    = newErr(http.StatusConflict, CodeResumeRequired, i18n.MsgResumeRequired)
	errInvalidForwarded  = newErr(http.StatusBadRequest, CodeInvalidInput, i18n.MsgInvalidForwardedProps)
	errExecutionNotFound = newErr(http.StatusNotFound, CodeExecutionNotFound, i18n.MsgExecutionNotFound)
	errToolsNotSupported = newErr(http.StatusBadRequest, CodeInvalidInput, i18n.MsgToolsNotSupported)
)

// asError extracts an *Error from err.
func asError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
