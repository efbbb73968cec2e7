package a2a

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// WithTracing makes every call except /health a client span of tp, and
// sends its context upstream in the headers prop writes (traceparent,
// tracestate): the agent's work joins the caller's trace. Without it no
// span is made and no header added.
func WithTracing(tp trace.TracerProvider, prop propagation.TextMapPropagator) Option {
	return func(c *Client) {
		if tp != nil && prop != nil {
			c.tracer = tp.Tracer("github.com/iac-code-agui/iac-code-agui/internal/a2a")
			c.prop = prop
			// New sets the base URL before it applies the options.
			if u, err := url.Parse(c.base); err == nil {
				c.spanHost = u.Host
			}
		}
	}
}

// Span attributes of an upstream call.
const (
	attrStreamEvents     = "iac_code_agui.a2a.events"
	attrStreamFirstEvent = "iac_code_agui.a2a.first_event_ms"
)

// startSpan opens the client span of one call; span is nil when tracing
// is off. name is the JSON-RPC method or the side route's path.
func (c *Client) startSpan(ctx context.Context, name, method string) (context.Context, trace.Span) {
	if c.tracer == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{attribute.String("server.address", c.spanHost)}
	if method != "" {
		attrs = append(attrs, attribute.String("rpc.system", "jsonrpc"), attribute.String("rpc.method", method))
	}
	return c.tracer.Start(ctx, "A2A "+name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endSpan ends span with err's text (errors of this package never carry
// the token or message text); a nil span is a no-op.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// inject writes ctx's trace context into h, when tracing is on.
func (c *Client) inject(ctx context.Context, h http.Header) {
	if c.prop != nil {
		c.prop.Inject(ctx, propagation.HeaderCarrier(h))
	}
}

// streamSpan is the span of an open stream: it ends when the stream is
// closed, with the number of events read, the wait for the first and the
// error that ended the stream, if any. Next and Close may run on two
// goroutines, hence the lock (taken only while tracing is on).
type streamSpan struct {
	mu     sync.Mutex
	span   trace.Span
	start  time.Time
	events int
	first  time.Duration
	err    error
	ended  bool
}

func (s *streamSpan) event() {
	s.mu.Lock()
	if s.events == 0 {
		s.first = time.Since(s.start)
	}
	s.events++
	s.mu.Unlock()
}

// fail records the error that ended the stream; io.EOF is its normal end.
func (s *streamSpan) fail(err error) {
	if errors.Is(err, io.EOF) {
		return
	}
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

func (s *streamSpan) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	s.span.SetAttributes(attribute.Int(attrStreamEvents, s.events))
	if s.events > 0 {
		s.span.SetAttributes(attribute.Float64(attrStreamFirstEvent, float64(s.first.Microseconds())/1000))
	}
	endSpan(s.span, s.err)
}
