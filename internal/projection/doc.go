// Package projection owns the vocabulary of the iac-code input projection
// (protocol.md §5.1–§5.2): the typed input kinds, the allowlist of the 25
// public keys a pending interrupt may persist, and Project, which applies
// that allowlist. The mapper (interrupt shapes), the state store (second
// line of defence on load and save), the adapter (answer validation) and
// the metrics (bounded kind labels) all read these definitions from here, so
// a new kind or key is added in one place.
//
// It is a leaf: it must not import any other package of this module, and
// it must not know AG-UI events, A2A calls, HTTP or persistence.
package projection
