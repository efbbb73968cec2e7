package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/fence"
	"github.com/iac-code-agui/iac-code-agui/internal/handoff"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
)

// HandoffUpstream is A2A's session-handoff service (a2a.Client.Handoff).
type HandoffUpstream interface {
	Handoff(ctx context.Context, op string, body []byte) (map[string]any, error)
}

// patternHandoff is the session-handoff proxy (protocol.md §7.3), GET and
// POST for every operation, as the original.
const patternHandoff = "/iac-code/handoff/{operation}"

// The refusal texts of the handoff route, answered {"error": <text>}
// (writePlainError), not the standard envelope.
const (
	handoffUnauthorized = "Unauthorized"
	handoffUnknownOp    = "Unknown handoff operation"
	handoffNoIdentity   = "AG-UI handoff identity is required"
	handoffInvalid      = "Invalid handoff request"
)

// handoffUnconfirmed is the answer when A2A's outcome is unknown.
var handoffUnconfirmed = map[string]string{"status": "UNKNOWN", "reason": "agui_handoff_upstream_unconfirmed"}

// A2A's answer asking the adapter to deliver the input itself.
const (
	statusNotReady        = "NOT_READY"
	reasonDeliverRequired = "agui_input_delivery_required"
)

// handoff serves /iac-code/handoff/{operation} (protocol.md §7.3):
// authentication by the whole header, the operation, the AG-UI identity,
// then the proxy to A2A, with the delivery of apply-input's pending input.
func (h *Handler) handoff(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		writePlainError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	if !h.authorizedExact(r) {
		writePlainError(w, http.StatusUnauthorized, handoffUnauthorized)
		return
	}
	op := r.PathValue("operation")
	if !handoff.Operations[op] {
		writePlainError(w, http.StatusNotFound, handoffUnknownOp)
		return
	}
	if op == "capabilities" {
		res, err := h.handoffCall(r.Context(), op, nil)
		h.handoffAnswer(w, r, op, res, err)
		return
	}
	body, release, err := h.readBody(w, r, maxRunBody)
	if err != nil {
		writePlainError(w, http.StatusBadRequest, handoffInvalid)
		return
	}
	payload, ok := decodeObject(body)
	release()
	if !ok {
		writePlainError(w, http.StatusBadRequest, handoffInvalid)
		return
	}
	if !handoff.IsAGUI(op, payload) {
		writePlainError(w, http.StatusBadRequest, handoffNoIdentity)
		return
	}
	if op == "apply-input" {
		h.handoffApply(w, r, body, payload)
		return
	}
	res, err := h.handoffCall(r.Context(), op, body)
	h.handoffAnswer(w, r, op, res, err)
}

// decodeObject decodes a JSON object, numbers kept as written.
func decodeObject(b []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil || m == nil || dec.More() {
		return nil, false
	}
	return m, true
}

func (h *Handler) handoffCall(ctx context.Context, op string, body []byte) (map[string]any, error) {
	if h.opts.Handoff == nil {
		return nil, a2a.ErrHandoffUnsupported
	}
	return h.opts.Handoff.Handoff(ctx, op, body)
}

// handoffAnswer writes A2A's answer, or the translation of its failure:
// a 404 is "unsupported", anything else "unconfirmed".
func (h *Handler) handoffAnswer(w http.ResponseWriter, r *http.Request, op string, res map[string]any, err error) {
	switch {
	case errors.Is(err, a2a.ErrHandoffUnsupported) && op == "capabilities":
		writeJSON(w, http.StatusOK, map[string]any{"version": fence.Version, "supported": false})
	case errors.Is(err, a2a.ErrHandoffUnsupported):
		writeJSON(w, http.StatusOK, map[string]string{"status": "UNSUPPORTED"})
	case err != nil:
		h.log.WarnContext(r.Context(), "Session handoff upstream unconfirmed", "operation", op, "error", err)
		writeJSON(w, http.StatusOK, handoffUnconfirmed)
	default:
		writeJSON(w, http.StatusOK, res)
	}
}

// handoffApply proxies apply-input with skipDelivery, and when A2A asks
// the adapter to deliver the input, rebuilds its RunAgentInput, admits it
// through the normal admission, drains its run and asks A2A again.
func (h *Handler) handoffApply(w http.ResponseWriter, r *http.Request, raw []byte, payload map[string]any) {
	payload["skipDelivery"] = true
	body, err := json.Marshal(payload)
	if err != nil {
		writePlainError(w, http.StatusBadRequest, handoffInvalid)
		return
	}
	res, err := h.handoffCall(r.Context(), "apply-input", body)
	if err != nil || res["status"] != statusNotReady || res["reason"] != reasonDeliverRequired {
		h.handoffAnswer(w, r, "apply-input", res, err)
		return
	}
	in, runBody, err := handoff.Rebuild(payload)
	if err != nil {
		h.log.DebugContext(r.Context(), "Handoff input refused", "reason", err.Error())
		writePlainError(w, http.StatusBadRequest, handoffInvalid)
		return
	}
	lang := requestLang(r)
	if pl, ok := i18n.Normalize(request.ForwardedLanguage(in.ForwardedProps)); ok {
		lang = pl // the caller's preferredLanguage, as on POST /
	}
	// The thread's owner replica delivers it: with a cluster the request
	// is forwarded there as it came.
	ctx, done, ok := h.route(w, r, raw, in.ThreadID, lang)
	if !ok {
		return
	}
	delivered := h.deliverHandoff(ctx, in, runBody, lang)
	done()
	if !delivered {
		writeJSON(w, http.StatusOK, handoffUnconfirmed)
		return
	}
	res, err = h.handoffCall(r.Context(), "apply-input", body)
	h.handoffAnswer(w, r, "apply-input", res, err)
}

// deliverHandoff admits the rebuilt input and drains its run; false when
// admission refused it.
func (h *Handler) deliverHandoff(ctx context.Context, in *agui.RunAgentInput, body []byte, lang i18n.Lang) bool {
	run, err := h.opts.Adapter.Admit(ctx, adapter.Request{Input: in, Body: body, Lang: lang})
	if err != nil {
		code := "STATE_UNAVAILABLE"
		var ae *adapter.Error
		if errors.As(err, &ae) {
			code = ae.Code
		}
		h.log.WarnContext(ctx, "Handoff input not admitted", "threadId", in.ThreadID, "runId", in.RunID, "code", code)
		return false
	}
	h.streams.Add(1)
	defer h.streams.Add(-1)
	d := &drainSink{}
	// An orchestrator that stops waiting must not cancel the session's task
	// mid-delivery (a disconnect cancels a run's task, protocol.md §9.1):
	// the delivery runs to its end.
	run.Stream(context.WithoutCancel(ctx), d)
	if d.err != nil {
		h.log.WarnContext(ctx, "Handoff input run failed", "threadId", in.ThreadID, "runId", in.RunID, "code", d.err.Code)
	}
	return true
}

// drainSink reads a delivered input's run to its end and keeps its
// RUN_ERROR, if any, for the log.
type drainSink struct{ err *agui.RunError }

func (d *drainSink) WriteBatch(evs []agui.Event) error {
	for _, e := range evs {
		if re, ok := e.(*agui.RunError); ok {
			d.err = re
		}
	}
	return nil
}
