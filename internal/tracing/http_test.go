package tracing

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestHandlerKeepsStreaming: behind the server span, the handler still
// reaches the connection's deadlines and Flush through
// http.ResponseController (SSE and the stream write timeout depend on
// them), sees the client's span as its parent, and the span is named
// by name.
func TestHandlerKeepsStreaming(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := &Tracing{main: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), prop: propagation.TraceContext{}}
	errs := make(chan error, 3)
	var parent trace.SpanContext
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parent = trace.SpanContextFromContext(r.Context())
		rc := http.NewResponseController(w)
		errs <- rc.SetWriteDeadline(time.Now().Add(time.Minute))
		_, _ = io.WriteString(w, "data: 1\n\n")
		errs <- rc.Flush()
		errs <- rc.SetReadDeadline(time.Time{})
	})
	srv := httptest.NewServer(tr.Handler(h, func(*http.Request) string { return "POST /" },
		func(r *http.Request) bool { return r.URL.Path != "/health" }))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", nil)
	req.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(res.Body)
	res.Body.Close()
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("through the server span: %v", err)
		}
	}
	if parent.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("handler's trace %s", parent.TraceID())
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "POST /" || spans[0].Parent.SpanID().String() != "b7ad6b7169203331" {
		t.Fatalf("spans %v", spans)
	}
	// A filtered route makes no span.
	res, err = http.Get(srv.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for range 3 {
		<-errs
	}
	if n := len(exp.GetSpans()); n != 1 {
		t.Fatalf("%d spans after /health", n)
	}
}
