package a2a

import (
	"context"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"
)

// JSON-RPC method names (A2A 1.0).
const (
	MethodSendMessage          = "SendMessage"
	MethodSendStreamingMessage = "SendStreamingMessage"
	MethodGetTask              = "GetTask"
	MethodCancelTask           = "CancelTask"
	MethodSubscribeToTask      = "SubscribeToTask"
)

// SendParams is one user message to send.
type SendParams struct {
	MessageID string // generated when empty
	ContextID string // omitted when empty
	TaskID    string // omitted when empty (a new task)
	Parts     []*a2asdk.Part
	// Metadata becomes message.metadata.iac_code; nil sends no metadata.
	Metadata map[string]any
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// encodeRequest encodes one JSON-RPC request (encode.go for the message
// requests).
func encodeRequest(method string, params any) ([]byte, error) {
	return encodeRequestID(method, uuid.NewString(), params)
}

// sendRequest builds the SDK request: role ROLE_USER, acceptedOutputModes
// ["text/plain"], everything in message.metadata.iac_code and params.metadata
// left empty (upstream.md §2.1).
func sendRequest(p *SendParams) *a2asdk.SendMessageRequest {
	id := p.MessageID
	if id == "" {
		id = a2asdk.NewMessageID()
	}
	parts := a2asdk.ContentParts(p.Parts)
	if parts == nil {
		parts = a2asdk.ContentParts{}
	}
	msg := &a2asdk.Message{
		ID:        id,
		Role:      a2asdk.MessageRoleUser,
		ContextID: p.ContextID,
		TaskID:    a2asdk.TaskID(p.TaskID),
		Parts:     parts,
	}
	if p.Metadata != nil {
		msg.Metadata = map[string]any{"iac_code": p.Metadata}
	}
	return &a2asdk.SendMessageRequest{
		Message: msg,
		Config:  &a2asdk.SendMessageConfig{AcceptedOutputModes: []string{"text/plain"}},
	}
}

// SendStreamingMessage sends a message and returns its event stream. A
// JSON-RPC error answered before the stream is returned as *RPCError.
func (c *Client) SendStreamingMessage(ctx context.Context, p *SendParams) (*Stream, error) {
	if p == nil {
		p = &SendParams{}
	}
	return c.stream(ctx, MethodSendStreamingMessage, sendRequest(p))
}

// SubscribeToTask re-attaches to a running task. An inactive task gives
// *RPCError -32001 from the call itself.
func (c *Client) SubscribeToTask(ctx context.Context, taskID string) (*Stream, error) {
	return c.stream(ctx, MethodSubscribeToTask, &a2asdk.SubscribeToTaskRequest{ID: a2asdk.TaskID(taskID)})
}

// SendMessage sends a message without streaming; the result is a task or a
// message event.
func (c *Client) SendMessage(ctx context.Context, p *SendParams) (*Event, error) {
	if p == nil {
		p = &SendParams{}
	}
	return c.unary(ctx, MethodSendMessage, sendRequest(p))
}

// GetTask fetches a task with at most historyLength history entries
// (historyLength < 0 leaves it to the server).
func (c *Client) GetTask(ctx context.Context, taskID string, historyLength int) (*Event, error) {
	req := &a2asdk.GetTaskRequest{ID: a2asdk.TaskID(taskID)}
	if historyLength >= 0 {
		req.HistoryLength = &historyLength
	}
	return c.unary(ctx, MethodGetTask, req)
}

// CancelTask cancels a task and returns it (normally CANCELED).
func (c *Client) CancelTask(ctx context.Context, taskID string) (*Event, error) {
	return c.unary(ctx, MethodCancelTask, &a2asdk.CancelTaskRequest{ID: a2asdk.TaskID(taskID)})
}

func (c *Client) unary(ctx context.Context, method string, params any) (*Event, error) {
	b, err := c.rpcBody(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return decodeFrame(nil, b, false)
}

// rpcBody posts one JSON-RPC request that is answered with a single JSON
// body, and returns that body.
func (c *Client) rpcBody(ctx context.Context, method string, params any) (b []byte, err error) {
	body, err := encodeRequest(method, params)
	if err != nil {
		return nil, err
	}
	if c.tracer != nil {
		var span trace.Span
		ctx, span = c.startSpan(ctx, method, method)
		defer func() { endSpan(span, err) }()
	}
	rpcURL, err := c.endpoint(ctx)
	if err != nil {
		return nil, err
	}
	cl, err := c.do(ctx, "POST", rpcURL, body, false)
	if err != nil {
		return nil, err
	}
	defer cl.done()
	return c.readAll(cl)
}

func (c *Client) stream(ctx context.Context, method string, params any) (s *Stream, err error) {
	body, err := encodeRequest(method, params)
	if err != nil {
		return nil, err
	}
	var ss *streamSpan
	if c.tracer != nil {
		var span trace.Span
		ctx, span = c.startSpan(ctx, method, method)
		ss = &streamSpan{span: span, start: time.Now()}
		defer func() {
			if err != nil {
				ss.fail(err)
				ss.end()
			} else {
				s.span = ss
			}
		}()
	}
	rpcURL, err := c.endpoint(ctx)
	if err != nil {
		return nil, err
	}
	cl, err := c.do(ctx, "POST", rpcURL, body, true)
	if err != nil {
		return nil, err
	}
	// Errors before the first event come back as plain JSON, not SSE
	// (upstream.md §1.5), so branch on the content type.
	ct := cl.resp.Header.Get("Content-Type")
	if isJSON(ct) {
		defer cl.done()
		b, err := c.readAll(cl)
		if err != nil {
			return nil, err
		}
		ev, err := decodeFrame(nil, b, false)
		if err != nil {
			return nil, err
		}
		return &Stream{pending: ev}, nil
	}
	if !isEventStream(ct) {
		cl.done()
		return nil, protocolError("unexpected content type %q for a stream", ct)
	}
	return &Stream{cl: cl, sse: newSSEReader(cl.body, c.maxFrame)}, nil
}
