// Package contract owns the published client contract of protocol.md: the
// JSON Schemas (draft 2020-12) in schemas/ and the TypeScript declarations
// of schemas/ts (package @iac-code-agui/protocol), both generated from the
// Go definitions here by `go generate ./internal/contract`.
//
// The schemas are derived from the code that enforces or produces each
// payload wherever that code has a table: the forwardedProps spellings
// from internal/request, the projection keys and kinds from
// internal/projection, the pipeline event types and the resume payload
// shapes from internal/mapper (BuildInterrupt itself). A test fails when
// the checked-in files are stale, and Validator checks live payloads (the
// e2e suites call it through internal/e2etest).
//
// It must not be imported by the server: it describes the wire, it does
// not take part in it.
package contract

//go:generate go run ./gen ../..
