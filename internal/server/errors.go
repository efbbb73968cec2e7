package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// errorBody is the JSON error envelope used before a stream starts
// (protocol.md §2.4).
// The fields after code and message are ours (§2.4): field and reason
// locate a refusal, hint (translated) says what to do about it,
// pendingInterrupts lists what a RESUME_REQUIRED thread waits for.
type errorBody struct {
	Error struct {
		Code              string           `json:"code"`
		Message           string           `json:"message"`
		Field             string           `json:"field,omitempty"`
		Reason            string           `json:"reason,omitempty"`
		Hint              string           `json:"hint,omitempty"`
		PendingInterrupts []agui.Interrupt `json:"pendingInterrupts,omitempty"`
	} `json:"error"`
}

// writeError answers with the standard envelope, the message translated
// into the request language.
func writeError(w http.ResponseWriter, lang i18n.Lang, status int, code, msg string) {
	writeErrorDetails(w, lang, status, code, msg, nil)
}

// writeRefusal answers a refusal in the shape of r's route: on the
// subscribe route {"error": <text>}, the English text untranslated, as the
// original's (protocol.md §7.2); elsewhere the standard envelope.
func writeRefusal(w http.ResponseWriter, r *http.Request, lang i18n.Lang, status int, code, msg string) {
	if r.Pattern == patternSubscribe {
		writePlainError(w, status, msg)
		return
	}
	writeError(w, lang, status, code, msg)
}

// writePlainError answers {"error": text}.
func writePlainError(w http.ResponseWriter, status int, text string) {
	writeJSON(w, status, map[string]string{"error": text})
}

// writeErrorDetails is writeError with our optional fields.
func writeErrorDetails(w http.ResponseWriter, lang i18n.Lang, status int, code, msg string, d *adapter.Details) {
	var body errorBody
	body.Error.Code = code
	body.Error.Message = i18n.T(lang, msg)
	if d != nil {
		body.Error.Field, body.Error.Reason = d.Field, d.Reason
		if d.Hint != "" {
			body.Error.Hint = i18n.T(lang, d.Hint)
		}
		body.Error.PendingInterrupts = d.Pending
	}
	noteErrorCode(w, code)
	writeJSON(w, status, body)
}

// writeAdapterError answers an adapter refusal with its own status and
// code; anything else is reported as unavailable state.
func writeAdapterError(w http.ResponseWriter, lang i18n.Lang, err error) {
	var e *adapter.Error
	if !errors.As(err, &e) {
		e = &adapter.Error{Status: http.StatusServiceUnavailable, Code: adapter.CodeStateUnavailable, Msg: i18n.MsgStateUnavailable}
	}
	writeErrorDetails(w, lang, e.Status, e.Code, e.Msg, e.Details)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":{"code":"INTERNAL_ERROR","message":"internal error"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
