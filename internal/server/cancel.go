package server

import (
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// cancel serves the cancellation extension (protocol.md §7.1).
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	lang := requestLang(r)
	body, release, ok := h.admitBody(w, r, lang, maxCancelBody, i18n.MsgCancelTooLarge, i18n.MsgCancelInvalidJSON)
	if !ok {
		return
	}
	defer release()
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
	release() // decoded; not held while the request is forwarded
	ctx, done, ok := h.route(w, r, body, threadID, lang)
	if !ok {
		return
	}
	defer done()
	executionID := r.PathValue("executionId")
	status, err := h.opts.Adapter.Cancel(ctx, executionID, threadID, rosID)
	if err != nil {
		writeAdapterError(w, lang, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"executionId": executionID, "status": status})
}
