package config

import (
	"fmt"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// Error is a configuration error whose Msg is one of the i18n Msg… constants,
// so the caller can print it in the user's language. Args fill the format
// verbs of Msg, if any. The underlying cause (a YAML or file error) is kept
// for errors.Is / errors.As but never appears in the text, because a YAML
// parser may quote the line that holds a token.
type Error struct {
	Msg  string
	Args []any

	cause error
}

// Error returns the English message.
func (e *Error) Error() string {
	if len(e.Args) > 0 {
		return fmt.Sprintf(e.Msg, e.Args...)
	}
	return e.Msg
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// Localized returns the message in lang.
func (e *Error) Localized(lang i18n.Lang) string {
	if len(e.Args) > 0 {
		return i18n.Tf(lang, e.Msg, e.Args...)
	}
	return i18n.T(lang, e.Msg)
}

func newError(msg string, cause error) *Error {
	return &Error{Msg: msg, cause: cause}
}
