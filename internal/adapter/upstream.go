package adapter

import (
	"context"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
)

// Upstream is what the adapter needs from the A2A server: the five JSON-RPC
// methods it calls and the two iac-code side routes (protocol.md §10.2).
// An Upstream may also list a context's open tasks (openTasker, orphan.go).
// A2A adapts an *a2a.Client; the adapter's tests script their own.
type Upstream interface {
	SendStreamingMessage(ctx context.Context, p *a2a.SendParams) (Stream, error)
	SubscribeToTask(ctx context.Context, taskID string) (Stream, error)
	SendMessage(ctx context.Context, p *a2a.SendParams) (*a2a.Event, error)
	GetTask(ctx context.Context, taskID string, historyLength int) (*a2a.Event, error)
	CancelTask(ctx context.Context, taskID string) (*a2a.Event, error)
	EnsureRestored(ctx context.Context, cwd, sessionID, taskID string) (string, error)
	PipelineState(ctx context.Context, taskID string, afterSequence int64) (*a2a.PipelineState, error)
}

// Stream is one open A2A event stream. Next returns io.EOF at its end;
// Buffered reports whether the next event is already received, so the run
// may hold its flush (protocol.md §4.1).
type Stream interface {
	Next() (*a2a.Event, error)
	Buffered() bool
	Close() error
}

// starter is a Stream that reports whether part of the next event has
// arrived (a2a.Stream.Started).
type starter interface{ Started() bool }

// A2A adapts the A2A client to Upstream.
func A2A(c *a2a.Client) Upstream { return clientUpstream{c} }

type clientUpstream struct{ *a2a.Client }

func (u clientUpstream) SendStreamingMessage(ctx context.Context, p *a2a.SendParams) (Stream, error) {
	s, err := u.Client.SendStreamingMessage(ctx, p)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (u clientUpstream) SubscribeToTask(ctx context.Context, taskID string) (Stream, error) {
	s, err := u.Client.SubscribeToTask(ctx, taskID)
	if err != nil {
		return nil, err
	}
	return s, nil
}
