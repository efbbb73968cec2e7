package server

import (
	"net/http/httptest"
	"testing"
)

// TestSpanNames: a traced request's span is named by its route, never by
// its path; probes, scrapes and requests of no route are not traced.
func TestSpanNames(t *testing.T) {
	h := New(Options{})
	for _, c := range []struct {
		method, path, name string
		traced             bool
	}{
		{"POST", "/", "POST /", true},
		{"POST", "/extensions/iac-code/v1/executions/ex-1/cancel", "POST /extensions/iac-code/v1/executions/{executionId}/cancel", true},
		{"POST", "/extensions/iac-code/v1/executions/ex-1/subscribe", "POST /extensions/iac-code/v1/executions/{executionId}/subscribe", true},
		{"GET", "/console/app.js", "GET /console/", true},
		{"GET", "/health", "GET /health", false},
		{"GET", "/metrics", "GET", false}, // no Metrics: no route either
		{"GET", "/no/such/secret-route", "GET", false},
		{"DELETE", "/", "DELETE", false},
		{"POST", "/iac-code/handoff/prepare", "POST /iac-code/handoff/{operation}", true},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		if got := h.SpanName(r); got != c.name {
			t.Errorf("%s %s: span name %q, want %q", c.method, c.path, got, c.name)
		}
		if got := h.Traced(r); got != c.traced {
			t.Errorf("%s %s: traced %v, want %v", c.method, c.path, got, c.traced)
		}
	}
}
