package demoagent

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Server is a started demo agent.
type Server struct {
	URL   string // "http://127.0.0.1:<port>/"
	Agent *Agent
	srv   *http.Server
	ln    net.Listener
	done  chan error
}

// Start listens on addr (for example "127.0.0.1:0") and serves the agent
// until Close or until ctx ends.
func Start(ctx context.Context, addr string, opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	ag := New(opts)
	s := &Server{URL: "http://" + ln.Addr().String() + "/", Agent: ag, ln: ln, done: make(chan error, 1),
		srv: &http.Server{Handler: tracedHandler(ag), ReadHeaderTimeout: 10 * time.Second}}
	go func() { s.done <- s.srv.Serve(ln) }()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-ag.base.Done():
		}
	}()
	return s, nil
}

// Close stops running tasks, closes open streams and the listener.
func (s *Server) Close() error {
	s.Agent.Close()
	err := s.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Run serves the demo agent on host:port until ctx is done; it backs the
// "iac-code-agui demo-agent" sub-command. opts.StepDelay defaults to
// DefaultStepDelay.
func Run(ctx context.Context, host string, port int, opts Options) error {
	if opts.StepDelay == 0 {
		opts.StepDelay = DefaultStepDelay
	}
	s, err := Start(ctx, net.JoinHostPort(host, strconv.Itoa(port)), opts)
	if err != nil {
		return err
	}
	if opts.Logger != nil {
		opts.Logger.Info("demo A2A agent listening", "url", s.URL, "auth", opts.Token != "")
	}
	<-ctx.Done()
	return s.Close()
}
