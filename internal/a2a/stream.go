package a2a

import (
	"errors"
	"io"
	"sync"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a/frame"
)

// Stream is the answer of a streaming call. Next and Close may be called
// from different goroutines; Next itself is not for concurrent use.
type Stream struct {
	cl      *call
	sse     *sseReader
	pending *Event        // a single result answered as plain JSON
	err     error         // sticky transport error
	dec     frame.Decoder // keeps what the stream's frames repeat
	once    sync.Once
	span    *streamSpan // nil when tracing is off (trace.go)
}

// Next returns the next event. It returns io.EOF at the end of the stream,
// *RPCError for an error frame (the stream stays readable), ErrProtocol
// for a malformed frame, and ErrIdleTimeout, ErrFrameTooLarge, the
// context's error or ErrStreamClosed when the stream was aborted.
func (s *Stream) Next() (*Event, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.sse == nil {
		if ev := s.pending; ev != nil {
			s.pending = nil
			if s.span != nil {
				s.span.event()
			}
			return ev, nil
		}
		s.err = io.EOF
		s.Close()
		return nil, io.EOF
	}
	data, isErr, err := s.sse.next()
	if err != nil {
		if !errors.Is(err, ErrFrameTooLarge) {
			// Prefer why the request ended (idle, cancel, Close) over
			// the read error it caused.
			err = ctxCause(s.cl.ctx, err)
		}
		s.err = err
		if s.span != nil {
			s.span.fail(err)
		}
		s.Close()
		return nil, err
	}
	if s.span != nil {
		s.span.event()
	}
	return decodeFrame(&s.dec, data, isErr)
}

// Close aborts the request and releases the connection. It is idempotent.
func (s *Stream) Close() error {
	s.once.Do(func() {
		if s.cl != nil {
			s.cl.done()
		}
		if s.span != nil {
			s.span.end()
		}
	})
	return nil
}

// Started reports whether part of a next frame is already received: the
// rest is on its way, unless the upstream stalls in the middle of a frame.
func (s *Stream) Started() bool {
	return s.sse != nil && s.sse.started()
}

// Buffered reports whether a complete frame is already buffered, so the
// next Next will not block on the network.
func (s *Stream) Buffered() bool {
	if s.sse == nil {
		return s.pending != nil
	}
	return s.sse.buffered()
}

// decodeFrame decodes one JSON-RPC response with d, or on its own when d
// is nil. isErrEvent is true for SSE frames with "event: error", which
// must carry a JSON-RPC error.
func decodeFrame(d *frame.Decoder, b []byte, isErrEvent bool) (*Event, error) {
	var (
		ev     *Event
		rpcErr *frame.RPCError
		err    error
	)
	if d != nil {
		ev, rpcErr, err = d.Decode(b)
	} else {
		ev, rpcErr, err = frame.Decode(b)
	}
	switch {
	case err != nil:
		return nil, protocolError("%s", err.Error())
	case rpcErr != nil:
		return nil, &RPCError{Code: rpcErr.Code, Message: rpcErr.Message, Data: rpcErr.Data}
	case isErrEvent:
		return nil, protocolError("error event without a JSON-RPC error")
	}
	return ev, nil
}
