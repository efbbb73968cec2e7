package server

import (
	"bytes"
	"context"
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
	ctx, run, done := h.admitRun(w, r)
	if run == nil {
		return
	}
	h.serveStream(ctx, w, done, func(ctx context.Context, w http.ResponseWriter) { h.stream(ctx, w, run) })
}

// serveStream serves an admitted stream (a run's or an observation's),
// counted among the open streams, and calls done once it has ended.
func (h *Handler) serveStream(ctx context.Context, w http.ResponseWriter, done func(), serve func(context.Context, http.ResponseWriter)) {
	h.streams.Add(1)
	defer done()
	defer h.streams.Add(-1)
	serve(ctx, w)
}

// stream writes the admitted run's SSE stream to w.
func (h *Handler) stream(ctx context.Context, w http.ResponseWriter, run *adapter.Run) {
	sw := agui.NewWriter(w, agui.WriterOptions{Heartbeat: h.opts.Heartbeat, WriteTimeout: h.opts.StreamWriteTimeout})
	defer sw.Close()
	if run.HoldsStart() {
		// Its headers and heartbeat leave now. Any other run writes
		// RUN_STARTED at once, and the headers go in the same write.
		_ = sw.Start() // on failure Stream's writes fail fast and release the thread
	}
	run.Stream(ctx, h.sinkFor(ctx, sw))
}

// admitRun runs the checks and the admission; it answers a refusal itself
// and returns a nil run. Otherwise done must be called once the run's
// stream ended (route). It is apart from run so that its stack frame is
// not held under an open stream (a handler stack that reaches 8 KiB
// doubles and never shrinks back).
//
//go:noinline
func (h *Handler) admitRun(w http.ResponseWriter, r *http.Request) (context.Context, *adapter.Run, func()) {
	lang := requestLang(r)
	body, release, ok := h.admitBody(w, r, lang, maxRunBody, i18n.MsgRequestTooLarge, i18n.MsgInvalidJSON)
	if !ok {
		return nil, nil, nil
	}
	defer release()
	if !utf8.Valid(body) || !json.Valid(body) {
		writeError(w, lang, http.StatusBadRequest, "INVALID_JSON", i18n.MsgInvalidJSON)
		return nil, nil, nil
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		writeError(w, lang, http.StatusBadRequest, adapter.CodeInvalidInput, i18n.MsgInputNotObject)
		return nil, nil, nil
	}
	in, err := agui.DecodeRunAgentInput(body)
	if err != nil {
		if pl, ok := i18n.Normalize(request.PreferredLanguage(body)); ok {
			lang = pl
		}
		h.envelopeRefused(w, r, lang, err)
		return nil, nil, nil
	}
	// The same member PreferredLanguage would find in body, without
	// decoding body a second time.
	if pl, ok := i18n.Normalize(request.ForwardedLanguage(in.ForwardedProps)); ok {
		lang = pl
	}
	// Decoded: the budget is not held while the request is forwarded or
	// the run streams.
	release()
	ctx, done, ok := h.route(w, r, body, in.ThreadID, lang)
	if !ok {
		return nil, nil, nil
	}
	admitted := false
	defer func() {
		if !admitted {
			done()
		}
	}()
	run, err := h.opts.Adapter.Admit(ctx, adapter.Request{Input: in, Body: body, Lang: lang})
	if err != nil {
		writeAdapterError(w, lang, err)
		return nil, nil, nil
	}
	admitted = true
	return ctx, run, done
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
