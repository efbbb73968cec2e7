package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"unicode/utf8"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// subscribeKeys are the only body keys of the subscribe route.
var subscribeKeys = map[string]bool{"threadId": true, "runId": true, "rosInvocationId": true, "afterSequence": true}

// subscribe serves the read-only observation route (protocol.md §7.2).
// Its refusals are {"error": <text>}, as the original's; authentication,
// media type and size are checked as on the other routes.
func (h *Handler) subscribe(w http.ResponseWriter, r *http.Request) {
	lang := requestLang(r)
	body, release, ok := h.admitBody(w, r, lang, maxCancelBody, i18n.MsgRequestTooLarge, i18n.MsgInvalidJSON)
	if !ok {
		return
	}
	defer release()
	var obj map[string]any
	if !utf8.Valid(body) || json.Unmarshal(body, &obj) != nil || obj == nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": adapter.ObserveInvalidIdentity})
		return
	}
	for k := range obj {
		if !subscribeKeys[k] {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": adapter.ObserveInvalidIdentity})
			return
		}
	}
	str := func(k string) string { s, _ := obj[k].(string); return s }
	// Decoded: the budget is not held while the request is forwarded or
	// the observation streams.
	release()
	// The execution lives in its owner's A2A server: observe it there.
	ctx, done, ok := h.route(w, r, body, str("threadId"), lang)
	if !ok {
		return
	}
	o, err := h.opts.Adapter.Observe(ctx, adapter.ObserveRequest{
		ExecutionID: r.PathValue("executionId"), ThreadID: str("threadId"), RunID: str("runId"), RosInvocationID: str("rosInvocationId"),
	})
	var oe *adapter.ObserveError
	switch {
	case errors.As(err, &oe):
		writeJSON(w, oe.Status, map[string]string{"error": oe.Text})
		done()
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		done()
	default:
		// An observation waits as long as a run does: it is counted like
		// one.
		h.serveStream(ctx, w, done, func(ctx context.Context, w http.ResponseWriter) { h.observe(ctx, w, o, lang) })
	}
}

// observe writes an observation's SSE stream to w. No heartbeat, as the
// original's observation stream (§7.2).
func (h *Handler) observe(ctx context.Context, w http.ResponseWriter, o *adapter.Observation, lang i18n.Lang) {
	sw := agui.NewWriter(w, agui.WriterOptions{Heartbeat: -1, WriteTimeout: h.opts.StreamWriteTimeout})
	defer sw.Close()
	_ = sw.Start() // on failure Stream's writes fail fast and release the thread
	o.Stream(ctx, h.sinkFor(ctx, sw), lang)
}
