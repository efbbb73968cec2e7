package demoagenttest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
)

// Server is a demo agent served on loopback with its calls recorded.
type Server struct {
	URL   string // "http://127.0.0.1:<port>/"
	Agent *demoagent.Agent
	rec   *recorder
	srv   *http.Server
	once  sync.Once
	done  chan struct{} // closed by Close
	err   error
}

// Start listens on addr (for example "127.0.0.1:0") and serves a new
// agent built with opts until Close or until ctx ends.
func Start(ctx context.Context, addr string, opts demoagent.Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	ag := demoagent.New(opts)
	rec := newRecorder(ag, opts.Token)
	s := &Server{URL: "http://" + ln.Addr().String() + "/", Agent: ag, rec: rec, done: make(chan struct{}),
		srv: &http.Server{Handler: rec, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

// Close stops running tasks, closes open streams and the listener. It may
// be called more than once.
func (s *Server) Close() error {
	s.once.Do(func() {
		close(s.done)
		s.Agent.Close()
		if err := s.srv.Close(); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	})
	return s.err
}

// Calls returns a copy of the JSON-RPC calls received so far.
func (s *Server) Calls() []Call { return s.rec.calls() }

// ContextHeaders returns the llm_headers binding the recorded calls asked
// for on a context (nil when none): the agent's rule, a map replaces, {}
// clears, omission inherits (docs/demo-agent.md). It is read from the
// calls, not from the agent, and knows only contexts the client named.
func (s *Server) ContextHeaders(contextID string) map[string]string {
	return s.rec.headers(contextID)
}
