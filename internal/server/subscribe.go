package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"unicode/utf8"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// observeUnauthorized is the subscribe route's 401 text (protocol.md §2.3).
const observeUnauthorized = "Unauthorized"

// subscribeKeys are the only body keys of the subscribe route.
var subscribeKeys = map[string]bool{"threadId": true, "runId": true, "rosInvocationId": true, "afterSequence": true}

// subscribe serves the read-only observation route (protocol.md §7.2).
// Every refusal is {"error": <text>}, as the original's. Like the
// original's it takes the whole Authorization header exactly (§2.3) and
// any Content-Type; unlike it, the body is bounded (docs/decisions.md,
// "Subscribe route refusals").
func (h *Handler) subscribe(w http.ResponseWriter, r *http.Request) {
	lang := requestLang(r)
	if !h.authorizedExact(r) {
		writePlainError(w, http.StatusUnauthorized, observeUnauthorized)
		return
	}
	body, release, err := h.readBody(w, r, maxCancelBody)
	switch {
	case errors.Is(err, errTooLarge):
		writePlainError(w, http.StatusRequestEntityTooLarge, i18n.MsgRequestTooLarge)
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		writePlainError(w, http.StatusRequestTimeout, i18n.MsgRequestTimeout)
		return
	case err != nil:
		// A body that ended early does not parse: the original's answer
		// to a body that is not JSON.
		writePlainError(w, http.StatusBadRequest, adapter.ObserveInvalidIdentity)
		return
	}
	defer release()
	body = trimBOM(body)
	var obj map[string]any
	if !utf8.Valid(body) || json.Unmarshal(body, &obj) != nil || obj == nil {
		writePlainError(w, http.StatusBadRequest, adapter.ObserveInvalidIdentity)
		return
	}
	for k := range obj {
		if !subscribeKeys[k] {
			writePlainError(w, http.StatusBadRequest, adapter.ObserveInvalidIdentity)
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
		writePlainError(w, oe.Status, oe.Text)
		done()
	case err != nil:
		writePlainError(w, http.StatusServiceUnavailable, err.Error())
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
