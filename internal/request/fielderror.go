package request

import (
	"fmt"
	"slices"
	"strings"
)

// FieldError is a forwardedProps failure with a machine-readable location:
// Pointer is an RFC 6901 JSON pointer into the RunAgentInput (a field's
// camelCase name, whichever spelling the client used), Reason a short
// English rule. Neither ever holds a value the client sent, only key names.
type FieldError struct {
	Pointer string
	Reason  string
}

func (e *FieldError) Error() string {
	return ErrInvalidForwardedProps.Error() + ": " + e.Pointer + ": " + e.Reason
}

// Unwrap makes every FieldError an ErrInvalidForwardedProps.
func (e *FieldError) Unwrap() error { return ErrInvalidForwardedProps }

// invalid reports the field called name (a schema key or one of the
// object names forwardedProps, iacCode, thinking, alibabaCloud).
func invalid(name, reason string, args ...any) error {
	return &FieldError{Pointer: pointerOf(name), Reason: fmt.Sprintf(reason, args...)}
}

// pointerOf places a schema key in forwardedProps. Keys are unique across
// the nested objects, so the name alone says where it lives.
func pointerOf(name string) string {
	const top = "/forwardedProps"
	in := func(fields []field) bool {
		return slices.ContainsFunc(fields, func(f field) bool { return f[0] == name })
	}
	switch {
	case name == "forwardedProps":
		return top
	case name == "iacCode":
		return top + "/iacCode"
	case name == "thinking" || name == "alibabaCloud" || in(iacKeys):
		return top + "/iacCode/" + name
	case in(thinKeys):
		return top + "/iacCode/thinking/" + name
	case in(akKeys):
		return top + "/iacCode/alibabaCloud/" + name
	}
	return top
}

// childPointer is the pointer of key inside the object at parent.
func childPointer(parent, key string) string {
	return parent + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
