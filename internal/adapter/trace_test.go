package adapter_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
)

// spanAttrs is a finished span's attributes, by key.
func spanAttrs(s tracetest.SpanStub) map[string]any {
	m := map[string]any{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

func spansNamed(exp *tracetest.InMemoryExporter, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func hasEvent(s tracetest.SpanStub, name string) bool {
	for _, e := range s.Events {
		if e.Name == name {
			return true
		}
	}
	return false
}

// TestSpans: the admission and run spans carry the Observer's facts (run
// kind, outcome, event count, refusal code), the run's span the interrupt
// it raised and the answer it applied, and an admission whose save met a
// newer stored revision the conflict and its retry.
func TestSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	f := newFixture(t, pausing(), fixtureOptions{tracer: tp.Tracer("test")})

	// An interrupt raised.
	s, err := f.run(t, f.request(t, "th-1", "r1", "hello", nil))
	if err != nil {
		t.Fatal(err)
	}
	id := interruptsOf(t, s)[0].ID
	run := spansNamed(exp, "agui.run")[0]
	a := spanAttrs(run)
	if a["iac_code_agui.run.kind"] != adapter.RunKindNew || a["iac_code_agui.run.outcome"] != adapter.RunOutcomeInterrupt ||
		a["iac_code_agui.run.events"] != int64(len(s.evs)) || a["iac_code_agui.thread.id"] != "th-1" || a["iac_code_agui.run.id"] != "r1" {
		t.Errorf("run span %v (the client got %d events)", a, len(s.evs))
	}
	if _, ok := a["iac_code_agui.run.first_event_ms"]; !ok || !hasEvent(run, "interrupt raised") {
		t.Errorf("run span %v, events %v", a, run.Events)
	}

	// A refusal: a new turn while the interrupt waits.
	if _, err := f.run(t, f.request(t, "th-1", "r2", "other", nil)); codeOf(err) != adapter.CodeResumeRequired {
		t.Fatalf("new turn: %v", err)
	}
	adm := spansNamed(exp, "agui.admission")
	if got := spanAttrs(adm[len(adm)-1])["iac_code_agui.admission.refusal"]; got != adapter.CodeResumeRequired {
		t.Errorf("refusal %v", got)
	}

	// Another writer saves the thread behind the adapter's back: the
	// resume's admission save conflicts, reloads and retries; the answer
	// is applied.
	doc, rev, err := f.store.Load(context.Background(), "th-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Save(context.Background(), doc, rev); err != nil {
		t.Fatal(err)
	}
	_, err = f.run(t, f.request(t, "th-1", "r3", "", allow(id)))
	if err != nil {
		t.Fatal(err)
	}
	adm = spansNamed(exp, "agui.admission")
	if !hasEvent(adm[len(adm)-1], "state conflict; reloading") {
		t.Errorf("no conflict on the resume's admission: %v", adm[len(adm)-1].Events)
	}
	runs := spansNamed(exp, "agui.run")
	a = spanAttrs(runs[len(runs)-1])
	if a["iac_code_agui.run.kind"] != adapter.RunKindResume || a["iac_code_agui.run.outcome"] != adapter.RunOutcomeSuccess ||
		!hasEvent(runs[len(runs)-1], "answer applied") {
		t.Errorf("resume span %v, events %v", a, runs[len(runs)-1].Events)
	}
}
