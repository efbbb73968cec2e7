package a2a_test

import (
	"context"
	"testing"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
)

// TestTraceContextUpstream: with WithTracing every upstream call (the two
// streams, GetTask, CancelTask and both side routes) is a client span
// under the caller's span, and the demo agent, continuing the trace, makes
// its server span a child of exactly that span: the traceparent it
// received names the call.
func TestTraceContextUpstream(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prop := propagation.TraceContext{}
	srv, err := demoagent.Start(context.Background(), "127.0.0.1:0", demoagent.Options{Token: token, TracerProvider: tp, Propagator: prop})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c := a2a.New(srv.URL, token, a2a.WithTracing(tp, prop))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx, parent := tp.Tracer("test").Start(ctx, "caller")

	st, err := c.SendStreamingMessage(ctx, &a2a.SendParams{Parts: []*a2asdk.Part{a2asdk.NewTextPart("Create a VPC")}, Metadata: map[string]any{"cwd": t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := drain(st)
	_ = st.Close()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	task := evs[0].TaskID
	if _, err := c.GetTask(ctx, task, 0); err != nil {
		t.Fatal(err)
	}
	// A finished task: the agent refuses these, but each call still goes
	// out with its trace context.
	if s, err := c.SubscribeToTask(ctx, task); err == nil {
		_, _ = drain(s)
		_ = s.Close()
	}
	_, _ = c.CancelTask(ctx, task)
	_, _ = c.PipelineState(ctx, task, -1)
	_, _ = c.EnsureRestored(ctx, t.TempDir(), "session-1", task)
	parent.End()

	calls := []string{"A2A SendStreamingMessage", "A2A GetTask", "A2A SubscribeToTask", "A2A CancelTask",
		"A2A GET /iac-code/pipeline/state", "A2A POST /iac-code/session/ensure-restored"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		spans := exp.GetSpans()
		missing := ""
		for _, name := range calls {
			var call *tracetest.SpanStub
			for i := range spans {
				if spans[i].Name == name {
					call = &spans[i]
				}
			}
			if call == nil {
				missing = name
				break
			}
			if call.Parent.SpanID() != parent.SpanContext().SpanID() || call.SpanContext.TraceID() != parent.SpanContext().TraceID() {
				t.Fatalf("%s is not a child of the caller's span", name)
			}
			served := false
			for _, s := range spans {
				served = served || s.SpanKind.String() == "server" && s.Parent.SpanID() == call.SpanContext.SpanID() &&
					s.SpanContext.TraceID() == call.SpanContext.TraceID()
			}
			if !served {
				missing = "the agent's span under " + name
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			for _, s := range spans {
				t.Logf("span %q %s parent %s", s.Name, s.SpanContext.SpanID(), s.Parent.SpanID())
			}
			t.Fatalf("missing: %s", missing)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
