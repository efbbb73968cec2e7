// Package reqid owns the request id: the rule for accepting a client's
// X-Request-Id, the generation of a fresh one, and its transport in a
// context.Context from the HTTP server through the adapter to the A2A
// client, which sends it upstream.
//
// It must not log, touch HTTP handlers or know about runs; it is a leaf
// package every layer may import.
package reqid

import (
	"context"

	"github.com/google/uuid"
)

// Header is the HTTP header that carries the request id, in both
// directions and upstream.
const Header = "X-Request-Id"

// MaxLen bounds an accepted client id; longer ones are replaced.
const MaxLen = 128

// Sane reports whether a client-supplied id may be reused: 1..MaxLen
// characters of letters, digits and - _ . : / + = @. Anything else (spaces,
// quotes, control characters, non-ASCII) is replaced, so an id can neither
// forge log structure nor carry message text of unbounded size.
func Sane(id string) bool {
	if id == "" || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '/', c == '+', c == '=', c == '@':
		default:
			return false
		}
	}
	return true
}

// New returns a fresh random id (a UUID v4).
func New() string { return uuid.NewString() }

// FromClient returns the client's id when it is sane, else a fresh one.
func FromClient(id string) string {
	if Sane(id) {
		return id
	}
	return New()
}

type ctxKey struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// From returns the id carried by ctx, or "".
func From(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}
