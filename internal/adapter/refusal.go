package adapter

import (
	"errors"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
)

// forwardedRefusal is INVALID_INPUT for a forwardedProps failure, with the
// field's JSON pointer and the rule it broke (protocol.md §2.4).
func forwardedRefusal(err error) *Error {
	var fe *request.FieldError
	if errors.As(err, &fe) {
		return errInvalidForwarded.with(&Details{Field: fe.Pointer, Reason: fe.Reason})
	}
	return errInvalidForwarded
}

// workspaceRefusal is INVALID_INPUT for a refused cwd. The reason is a
// fixed phrase: never the path or an OS error, which could name paths the
// client did not send.
func workspaceRefusal(err error) *Error {
	reason := "is invalid"
	var we *request.WorkspaceError
	if errors.As(err, &we) {
		switch we.Msg {
		case i18n.MsgWorkspaceNotAbsolute:
			reason = "must be an absolute path"
		case i18n.MsgWorkspaceOutsideRoots:
			reason = "is outside the allowed workspace roots"
		case i18n.MsgWorkspaceNotDirectory:
			reason = "is not a directory"
		case i18n.MsgWorkspaceCreateFailed:
			reason = "cannot be created"
		}
	}
	return errInvalidForwarded.with(&Details{Field: "/forwardedProps/iacCode/cwd", Reason: reason})
}
