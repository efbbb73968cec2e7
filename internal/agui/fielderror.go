package agui

import (
	"strings"
)

// FieldError is an envelope failure: Path names the member in the
// validator's dotted form ("messages[1].content"), Reason is a short
// English rule. Neither holds a value the client sent.
type FieldError struct {
	Path   string
	Reason string
}

func (e *FieldError) Error() string {
	return ErrInvalidEnvelope.Error() + ": " + e.Path + ": " + e.Reason
}

// Unwrap makes every FieldError an ErrInvalidEnvelope.
func (e *FieldError) Unwrap() error { return ErrInvalidEnvelope }

// Pointer is Path as an RFC 6901 JSON pointer ("/messages/1/content").
func (e *FieldError) Pointer() string {
	if e.Path == "" {
		return ""
	}
	var b strings.Builder
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	for _, part := range strings.Split(e.Path, ".") {
		name, rest, _ := strings.Cut(part, "[")
		b.WriteString("/" + esc.Replace(name))
		for rest != "" {
			idx, tail, _ := strings.Cut(rest, "]")
			b.WriteString("/" + idx)
			rest = strings.TrimPrefix(tail, "[")
		}
	}
	return b.String()
}
