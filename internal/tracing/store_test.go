package tracing

import (
	"errors"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// TestStoreSpans: a load of a missing thread, a save, and a save on a
// stale revision, each a span with the store kind, the thread id, the
// document's size and the conflict mark.
func TestStoreSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := &Tracing{main: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))}
	st := tr.Store(state.NewMemStore(), "redis")
	ctx := t.Context()
	if _, _, err := st.Load(ctx, "th-1"); !errors.Is(err, state.ErrNotFound) {
		t.Fatal(err)
	}
	doc := state.NewThread("th-1", "/ws", nil, "ex-1", "inv-1")
	if _, err := st.Save(ctx, doc, state.NoRevision); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Save(ctx, doc, state.NoRevision); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("stale save: %v", err)
	}
	size, _ := state.Encode(doc)
	spans := exp.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("%d spans", len(spans))
	}
	want := []struct {
		name  string
		attrs map[string]any
	}{
		{"state.load", map[string]any{AttrStoreKind: "redis", AttrThreadID: "th-1", AttrFound: false}},
		{"state.save", map[string]any{AttrStoreKind: "redis", AttrThreadID: "th-1", AttrBytes: int64(len(size))}},
		{"state.save", map[string]any{AttrStoreKind: "redis", AttrThreadID: "th-1", AttrConflict: true}},
	}
	for i, w := range want {
		s := spans[i]
		if s.Name != w.name {
			t.Errorf("span %d: %s, want %s", i, s.Name, w.name)
		}
		got := map[string]any{}
		for _, kv := range s.Attributes {
			got[string(kv.Key)] = kv.Value.AsInterface()
		}
		for k, v := range w.attrs {
			if got[k] != v {
				t.Errorf("span %d %s: %s = %v, want %v", i, s.Name, k, got[k], v)
			}
		}
	}
}
