package agui

import (
	"unicode/utf8"
)

// MaxIDLength is the longest identifier a request may carry, in Unicode
// code points (protocol.md §3.1): threadId, runId, parentRunId, message
// ids, toolCallId, tool call ids and resume interruptIds. Ours: AG-UI sets
// no limit, but every id is logged, echoed and some are persisted, so an
// unbounded id lets one request grow a thread document past what the
// loader accepts (docs/decisions.md).
const MaxIDLength = 256

// validID reports whether s is short enough and free of control
// characters (C0, DEL and C1), which no client needs in an identifier and
// which would otherwise reach logs, file names and A2A metadata.
func validID(s string) bool {
	if utf8.RuneCountInString(s) > MaxIDLength {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			return false
		}
	}
	return true
}

// id reads a required identifier member.
func (o object) id(key, path string) (string, error) {
	s, err := o.str(key, path)
	if err != nil {
		return "", err
	}
	if !validID(s) {
		return "", invalid(path+key, "must be at most 256 characters without control characters")
	}
	return s, nil
}

// optID reads an optional identifier member; null counts as absent.
func (o object) optID(key, path string) (string, error) {
	s, err := o.optStr(key, path)
	if err != nil {
		return "", err
	}
	if !validID(s) {
		return "", invalid(path+key, "must be at most 256 characters without control characters")
	}
	return s, nil
}
