// Package request parses and validates the iac-code part of an AG-UI run
// request.
//
// It owns the strict forwardedProps.iacCode schema (protocol.md §3.3), the
// workspace (cwd) resolution against the allowed roots (§3.4), the
// conversion of the latest user message into A2A parts (§3.2), the
// canonical request digest used for run idempotency (§6), and the A2A
// message metadata built from a request (§10.3–§10.4).
//
// It must not know HTTP, thread state or A2A calls: callers map its errors
// to HTTP statuses or RUN_ERROR events, and the AG-UI envelope itself is
// validated elsewhere. Nothing here logs; IacCode's String and LogValue
// never show secrets (llmApiKey, llmHeaders values, AccessKey secret, STS
// token).
package request
