package a2a

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/iac-code-agui/iac-code-agui/internal/reqid"
)

// Defaults of the client options.
const (
	DefaultIdleTimeout   = time.Hour
	DefaultMaxFrameBytes = 64 << 20
	dialTimeout          = 10 * time.Second
	httpErrorBodyLimit   = 4 << 10
)

// Client talks to one upstream A2A server. It is safe for concurrent use.
type Client struct {
	base     string // ends with "/"
	token    string
	hc       *http.Client
	idle     time.Duration
	maxFrame int
	// tracer, prop and spanHost are set by WithTracing (trace.go); nil
	// when off.
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	spanHost string        // the base URL's host, the spans' server.address
	card     *cardEndpoint // WithAgentCard; nil posts JSON-RPC to base
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient replaces the default HTTP client. It should have no
// Timeout: a total timeout would cut streams that last hours.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithIdleTimeout aborts a call when no byte arrived for d (default 1 h).
// There is no total timeout. d <= 0 disables the watchdog.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *Client) { c.idle = d }
}

// WithMaxFrameBytes caps one SSE frame or JSON body (default 64 MiB).
func WithMaxFrameBytes(n int) Option {
	return func(c *Client) {
		if n > 0 {
			c.maxFrame = n
		}
	}
}

// New returns a client for the A2A server at baseURL (a trailing "/" is
// added when missing; JSON-RPC requests POST to it). token, when not
// empty, is sent as a bearer token on every request.
func New(baseURL, token string, opts ...Option) *Client {
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	c := &Client{
		base:     baseURL,
		token:    token,
		idle:     DefaultIdleTimeout,
		maxFrame: DefaultMaxFrameBytes,
	}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		c.hc = newHTTPClient()
	}
	return c
}

// BaseURL returns the base URL requests are sent to.
func (c *Client) BaseURL() string { return c.base }

// call is one HTTP exchange guarded by the idle watchdog. The caller must
// call done when finished with the body.
type call struct {
	resp *http.Response
	body io.Reader // resp.Body with idle tracking
	ctx  context.Context
	done func()
}

// do sends one request. A non-2xx status is returned as *HTTPError after
// reading the first 4 KiB of the body.
func (c *Client) do(ctx context.Context, method, url string, body []byte, stream bool) (*call, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	wd := newWatchdog(c.idle, cancel)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		wd.stop()
		cancel(nil)
		return nil, err
	}
	h := req.Header
	h["A2A-Version"] = []string{"1.0"}
	h["Content-Type"] = []string{"application/json"}
	if stream {
		h["Accept"] = []string{"text/event-stream"}
	} else {
		h["Accept"] = []string{"application/json"}
	}
	if c.token != "" {
		h["Authorization"] = []string{"Bearer " + c.token}
	}
	// The AG-UI request's id, so the upstream's logs can be joined with
	// ours (reqid.With puts it in the context).
	if id := reqid.From(ctx); id != "" {
		h[reqid.Header] = []string{id}
	}
	c.inject(ctx, h)
	resp, err := c.hc.Do(req)
	if err != nil {
		wd.stop()
		err = ctxCause(ctx, err)
		cancel(nil)
		return nil, err
	}
	cl := &call{resp: resp, body: wd.reader(resp.Body), ctx: ctx}
	cl.done = func() {
		wd.stop()
		cancel(ErrStreamClosed)
		resp.Body.Close()
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(cl.body, httpErrorBodyLimit))
		cl.done()
		return nil, &HTTPError{StatusCode: resp.StatusCode, Body: string(b)}
	}
	return cl, nil
}

// readAll reads a whole JSON body, capped at the frame limit.
func (c *Client) readAll(cl *call) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(cl.body, int64(c.maxFrame)+1))
	if err != nil {
		return nil, ctxCause(cl.ctx, err)
	}
	if len(b) > c.maxFrame {
		return nil, ErrFrameTooLarge
	}
	return b, nil
}

// plain performs a side-route request and returns the 2xx status and
// body. route names its span; "" makes none (the health probe).
func (c *Client) plain(ctx context.Context, method, path, route string, body []byte) (status int, b []byte, err error) {
	if route != "" {
		var span trace.Span
		ctx, span = c.startSpan(ctx, method+" "+route, "")
		defer func() { endSpan(span, err) }()
	}
	cl, err := c.do(ctx, method, c.base+path, body, false)
	if err != nil {
		return 0, nil, err
	}
	defer cl.done()
	b, err = c.readAll(cl)
	return cl.resp.StatusCode, b, err
}

// ctxCause prefers the reason the request context ended (idle timeout,
// caller cancel) over the transport error it produced.
func ctxCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return err
}

func isEventStream(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/event-stream"
}

// isJSON reports whether a Content-Type is application/json or +json.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// CloseIdleConnections closes the upstream connections no call is using.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }
