package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"unicode/utf8"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/reqid"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
)

// run serves POST /: the checks of protocol.md §2.5 in order, then the SSE
// stream of the admitted run.
func (h *Handler) run(w http.ResponseWriter, r *http.Request) {
	lang := requestLang(r)
	body, ok := h.admitBody(w, r, lang, maxRunBody, i18n.MsgRequestTooLarge, i18n.MsgInvalidJSON)
	if !ok {
		return
	}
	if !utf8.Valid(body) || !json.Valid(body) {
		writeError(w, lang, http.StatusBadRequest, "INVALID_JSON", i18n.MsgInvalidJSON)
		return
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		writeError(w, lang, http.StatusBadRequest, adapter.CodeInvalidInput, i18n.MsgInputNotObject)
		return
	}
	if pl, ok := i18n.Normalize(request.PreferredLanguage(body)); ok {
		lang = pl
	}
	in, err := agui.DecodeRunAgentInput(body)
	if err != nil {
		h.envelopeRefused(w, r, lang, err)
		return
	}
	ctx, done, ok := h.route(w, r, body, in.ThreadID, lang)
	if !ok {
		return
	}
	defer done()
	run, err := h.opts.Adapter.Admit(ctx, adapter.Request{Input: in, Body: body, Lang: lang})
	if err != nil {
		writeAdapterError(w, lang, err)
		return
	}
	h.streams.opened()
	defer h.streams.closed()
	sw := agui.NewWriter(w, agui.WriterOptions{Heartbeat: h.opts.Heartbeat})
	defer sw.Close()
	if err := sw.Start(); err != nil {
		run.Stream(ctx, sw) // releases the thread; writes fail fast
		return
	}
	run.Stream(ctx, sw)
}

// envelopeRefused answers an invalid RunAgentInput with the spec's code and
// message, plus the member's JSON pointer and the rule it broke (ours,
// §2.4), and logs the reason at debug level (never a value).
func (h *Handler) envelopeRefused(w http.ResponseWriter, r *http.Request, lang i18n.Lang, err error) {
	var d *adapter.Details
	var fe *agui.FieldError
	if errors.As(err, &fe) {
		d = &adapter.Details{Field: fe.Pointer(), Reason: fe.Reason}
		h.log.DebugContext(r.Context(), "AG-UI envelope refused", "requestId", reqid.From(r.Context()), "field", d.Field, "reason", d.Reason)
	}
	writeErrorDetails(w, lang, http.StatusBadRequest, adapter.CodeInvalidInput, i18n.MsgInvalidEnvelope, d)
}
