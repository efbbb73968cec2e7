package server

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/iac-code-agui/iac-code-agui/internal/cluster"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Cluster is what the server needs to serve a thread from any replica
// (internal/cluster implements it; nil runs one process).
type Cluster interface {
	Claim(ctx context.Context, threadID string) (cluster.Owner, error)
	ClaimExisting(ctx context.Context, threadID string) (cluster.Owner, error)
	Forwarded(r *http.Request) bool
	Forward(w http.ResponseWriter, r *http.Request, body []byte, owner cluster.Owner) error
	// Confirm returns nil while this replica's lease on the thread is
	// still lease and sure to be in force, waiting for the renewals when
	// it may have lapsed; cluster.ErrLeaseLost once it is gone.
	Confirm(ctx context.Context, threadID, lease string) error
}

// CodeOwnerUnavailable answers a request whose thread is owned by a
// replica that does not answer; it is retryable (Retry-After).
const CodeOwnerUnavailable = "OWNER_UNAVAILABLE"

// route decides where a request of threadID is served. It returns the
// context to serve it with here (carrying the thread's lease, which fences
// every write), a func the caller must call once the request is answered
// (it keeps the lease renewed until then), and true; or false when it
// answered the request itself: by forwarding it to the owner, or with an
// error.
func (h *Handler) route(w http.ResponseWriter, r *http.Request, body []byte, threadID string, lang i18n.Lang) (context.Context, func(), bool) {
	nop := func() {}
	c := h.opts.Cluster
	if c == nil {
		return r.Context(), nop, true
	}
	if _, err := state.FileKey(threadID); err != nil {
		return r.Context(), nop, true // admission answers the bad id
	}
	claim := c.Claim
	if r.PathValue("executionId") != "" {
		// A cancel or an observation acts only on a thread that exists: a
		// thread the store does not have gets no lease (and no key), and
		// the adapter answers it as not found.
		claim = c.ClaimExisting
	}
	owner, err := claim(r.Context(), threadID)
	if errors.Is(err, cluster.ErrDraining) {
		// This replica is stopping and serves nothing of the thread: the
		// client's retry is served by another replica.
		ownerUnavailable(w, r, lang, cluster.Owner{})
		return nil, nop, false
	}
	if err != nil {
		h.log.WarnContext(r.Context(), "AG-UI thread ownership unavailable", "threadId", threadID, "error", err)
		writeRefusal(w, r, lang, http.StatusServiceUnavailable, "STATE_UNAVAILABLE", i18n.MsgStateUnavailable)
		return nil, nop, false
	}
	if owner.Absent {
		// No write can pass under this lease: a thread created meanwhile
		// by another replica is never written from here.
		return state.WithLease(r.Context(), owner.Lease), nop, true
	}
	if owner.Local {
		if owner.Acquired {
			h.opts.Adapter.Invalidate(threadID)
		}
		done := owner.Done
		if done == nil {
			done = nop
		}
		ctx := withConfirm(state.WithLease(r.Context(), owner.Lease), lang, func(ctx context.Context) error {
			return c.Confirm(ctx, threadID, owner.Lease)
		})
		return ctx, done, true
	}
	if c.Forwarded(r) {
		// The replica that sent this thought we own the thread; the lease
		// moved meanwhile. No second hop: the client retries.
		ownerUnavailable(w, r, lang, owner)
		return nil, nop, false
	}
	if err := c.Forward(w, r, body, owner); errors.Is(err, cluster.ErrOwnerNotAllowed) {
		// The lease names a URL the operator did not list: nothing is
		// sent to it (docs/decisions.md, "Forwarding only to configured
		// replicas").
		h.log.WarnContext(r.Context(), "AG-UI thread owner is not a configured replica; not forwarded", "threadId", threadID, "owner", owner.URL)
		ownerUnavailable(w, r, lang, owner)
	} else if err != nil {
		h.log.WarnContext(r.Context(), "AG-UI thread owner unreachable", "threadId", threadID, "error", err)
		ownerUnavailable(w, r, lang, owner)
	}
	return nil, nop, false
}

// ownerUnavailable answers 503 OWNER_UNAVAILABLE with the time left on the
// unreachable owner's lease as Retry-After.
func ownerUnavailable(w http.ResponseWriter, r *http.Request, lang i18n.Lang, owner cluster.Owner) {
	secs := int(math.Ceil(owner.Expires.Seconds()))
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeRefusal(w, r, lang, http.StatusServiceUnavailable, CodeOwnerUnavailable, i18n.MsgOwnerUnavailable)
}
