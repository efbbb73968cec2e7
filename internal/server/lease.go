package server

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/cluster"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// confirmKey carries, in a request's context, the check that this
// replica still owns the request's thread (route), with the request's
// language.
type confirmKey struct{}

type leaseCheck struct {
	confirm func(context.Context) error
	lang    i18n.Lang
}

func withConfirm(ctx context.Context, lang i18n.Lang, confirm func(context.Context) error) context.Context {
	return context.WithValue(ctx, confirmKey{}, leaseCheck{confirm: confirm, lang: lang})
}

// leaseSink is the sink of a stream served under a thread's lease: it
// holds each batch until the lease is sure to be in force (Cluster.
// Confirm), so that a replica cut off from Redis stops streaming before
// its lease can lapse to another replica, and continues once a renewal
// kept the lease (a Redis stall nobody else could use). Once the lease is
// lost it ends the stream with RUN_ERROR OWNER_UNAVAILABLE and fails
// every later write, as for a client that left: the run stops there, and
// its writes would be refused (fenced) anyway.
type leaseSink struct {
	w       *agui.Writer
	ctx     context.Context
	confirm func(context.Context) error
	lang    i18n.Lang
	log     *slog.Logger
	err     error
}

// sinkFor returns the sink a stream writes to: w itself, or w behind the
// lease check when the request was served under a lease.
func (h *Handler) sinkFor(ctx context.Context, w *agui.Writer) interface {
	WriteBatch([]agui.Event) error
	WriteBatchSoon([]agui.Event, time.Duration) error
} {
	lc, ok := ctx.Value(confirmKey{}).(leaseCheck)
	if !ok {
		return w
	}
	return &leaseSink{w: w, ctx: ctx, confirm: lc.confirm, lang: lc.lang, log: h.log}
}

func (s *leaseSink) check() error {
	if s.err != nil {
		return s.err
	}
	if err := s.confirm(s.ctx); err != nil {
		s.err = err
		if errors.Is(err, cluster.ErrLeaseLost) {
			s.log.WarnContext(s.ctx, "AG-UI thread lease lost while the stream was held; the stream ends")
			_ = s.w.WriteBatch([]agui.Event{&agui.RunError{Code: CodeOwnerUnavailable, Message: i18n.T(s.lang, i18n.MsgOwnerUnavailable)}})
		}
		return err
	}
	return nil
}

func (s *leaseSink) WriteBatch(evs []agui.Event) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.w.WriteBatch(evs)
}

func (s *leaseSink) WriteBatchSoon(evs []agui.Event, within time.Duration) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.w.WriteBatchSoon(evs, within)
}
