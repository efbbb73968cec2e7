package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"unicode/utf8"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// cancel serves the cancellation extension (adapter.md §7.1).
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	lang := requestLang(r)
	if !h.authorized(r) {
		writeError(w, lang, http.StatusUnauthorized, "UNAUTHORIZED", i18n.MsgUnauthorized)
		return
	}
	if !jsonMediaType(r) {
		writeError(w, lang, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", i18n.MsgUnsupportedMediaType)
		return
	}
	body, err := readBody(w, r, maxCancelBody)
	if errors.Is(err, errTooLarge) {
		writeError(w, lang, http.StatusRequestEntityTooLarge, "REQUEST_TOO_LARGE", i18n.MsgCancelTooLarge)
		return
	}
	if err != nil {
		return
	}
	var v any
	if !utf8.Valid(body) || json.Unmarshal(body, &v) != nil {
		writeError(w, lang, http.StatusBadRequest, "INVALID_JSON", i18n.MsgCancelInvalidJSON)
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		writeError(w, lang, http.StatusBadRequest, adapter.CodeInvalidInput, i18n.MsgCancelNotObject)
		return
	}
	threadID, _ := obj["threadId"].(string)
	rosID, _ := obj["rosInvocationId"].(string)
	if threadID == "" || rosID == "" {
		writeError(w, lang, http.StatusBadRequest, adapter.CodeInvalidInput, i18n.MsgCancelIdentityRequired)
		return
	}
	executionID := r.PathValue("executionId")
	status, err := h.opts.Adapter.Cancel(r.Context(), executionID, threadID, rosID)
	if err != nil {
		var e *adapter.Error
		if !errors.As(err, &e) {
			e = &adapter.Error{Status: http.StatusServiceUnavailable, Code: adapter.CodeStateUnavailable, Msg: i18n.MsgStateUnavailable}
		}
		writeError(w, lang, e.Status, e.Code, e.Msg)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"executionId": executionID, "status": status})
}
