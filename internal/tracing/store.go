package tracing

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Span attributes of the thread store.
const (
	AttrStoreKind = "iac_code_agui.state.store"
	AttrThreadID  = "iac_code_agui.thread.id"
	AttrBytes     = "iac_code_agui.state.bytes"
	AttrFound     = "iac_code_agui.state.found"
	AttrConflict  = "iac_code_agui.state.conflict"
)

// Store wraps s so that every load and save is a span naming the store
// kind (file, redis), the thread id and the document's encoded size; a
// save the store refused as a conflict is marked, so the reload and the
// retry that follow read as such. s itself when off.
func (t *Tracing) Store(s state.Store, kind string) state.Store {
	if t == nil {
		return s
	}
	return &tracedStore{s: s, kind: kind, tracer: t.main.Tracer(scopePrefix + "internal/state")}
}

type tracedStore struct {
	s      state.Store
	kind   string
	tracer trace.Tracer
}

func (ts *tracedStore) Load(ctx context.Context, threadID string) (*state.Thread, state.Revision, error) {
	ctx, span := ts.tracer.Start(ctx, "state.load", trace.WithAttributes(
		attribute.String(AttrStoreKind, ts.kind), attribute.String(AttrThreadID, threadID)))
	defer span.End()
	doc, rev, err := ts.s.Load(ctx, threadID)
	switch {
	case err == nil:
		span.SetAttributes(attribute.Bool(AttrFound, true), attribute.Int(AttrBytes, encodedSize(doc)))
	case errors.Is(err, state.ErrNotFound):
		span.SetAttributes(attribute.Bool(AttrFound, false))
	default:
		span.SetStatus(codes.Error, err.Error())
	}
	return doc, rev, err
}

func (ts *tracedStore) Save(ctx context.Context, doc *state.Thread, prev state.Revision) (state.Revision, error) {
	ctx, span := ts.tracer.Start(ctx, "state.save", trace.WithAttributes(
		attribute.String(AttrStoreKind, ts.kind), attribute.String(AttrThreadID, doc.ThreadID),
		attribute.Int(AttrBytes, encodedSize(doc))))
	defer span.End()
	rev, err := ts.s.Save(ctx, doc, prev)
	switch {
	case err == nil:
	case errors.Is(err, state.ErrConflict):
		span.SetAttributes(attribute.Bool(AttrConflict, true))
	default:
		span.SetStatus(codes.Error, err.Error())
	}
	return rev, err
}

// encodedSize is the size of doc in the thread file format, which both
// stores write; 0 for a document the codec refuses.
func encodedSize(doc *state.Thread) int {
	b, err := state.Encode(doc)
	if err != nil {
		return 0
	}
	return len(b)
}
