// Package goagent is a third-party A2A 1.0 agent for the generic profile's
// tests, built only with the official Go SDK's server packages (a2a-go
// v2.4.0 a2asrv): nothing in it knows iac-code or the gateway. It serves
// JSON-RPC on a path of its own (/a2a/jsonrpc), named by its agent card, so
// the gateway must read the card to find it.
//
// Behaviour, chosen by the user's text:
//   - "hello": a few status-message text chunks and an artifact text, then
//     TASK_STATE_COMPLETED;
//   - "ask": TASK_STATE_INPUT_REQUIRED with a question; the text answer
//     streams "you said: <answer>" and completes;
//   - "auth": TASK_STATE_AUTH_REQUIRED with AuthPrompt; the execution
//     goes on once the user signed in out of band (POST /test/signin, or
//     SignIn), streams "signed in" and completes;
//   - "fail": TASK_STATE_FAILED with a message;
//   - "slow": a chunk every 300 ms for about 3 s, then completes;
//   - "image" with file parts: describes each ("file a.png image/png 8
//     bytes") and completes;
//   - anything else: echoes the text and completes.
//
// It must not import the gateway's packages: it stands for somebody else's
// agent.
package goagent

import (
	"context"
	"fmt"
	"iter"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Question is what "ask" asks.
const Question = "What is your name?"

// AuthPrompt is what "auth" asks.
const AuthPrompt = "Sign in, then send the code."

// FailMessage is the message of the failed task of "fail".
const FailMessage = "The agent failed on purpose."

// HelloChunks are the status-message chunks of "hello"; HelloArtifact is
// the text of its artifact.
var HelloChunks = []string{"Hello", ", ", "world"}

// HelloArtifact is the artifact text "hello" streams after its chunks.
const HelloArtifact = " (from an artifact)"

// SlowChunks is how many chunks "slow" streams; SlowInterval the pause
// before each.
const (
	SlowChunks   = 10
	SlowInterval = 300 * time.Millisecond
)

// RPCPath is where the agent serves JSON-RPC.
const RPCPath = "/a2a/jsonrpc"

// Server is a running agent.
type Server struct {
	URL string // base URL, ending in "/"
	srv *http.Server
	wg  sync.WaitGroup
	ex  *executor
}

// Start serves the agent on addr ("127.0.0.1:0" for a free port).
func Start(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String() + "/"
	card := &a2a.AgentCard{
		Name:        "go-sdk-test-agent",
		Description: "A2A test agent built with a2a-go",
		Version:     "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(strings.TrimSuffix(base, "/")+RPCPath, a2a.TransportProtocolJSONRPC),
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		Skills:             []a2a.AgentSkill{{ID: "test", Name: "test", Description: "hello, ask, fail, slow", Tags: []string{"test"}}},
	}
	ex := &executor{signin: make(chan struct{}, 64)}
	mux := http.NewServeMux()
	mux.Handle(RPCPath, a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(ex)))
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.HandleFunc("POST /test/signin", func(w http.ResponseWriter, _ *http.Request) {
		ex.signIn()
		w.WriteHeader(http.StatusNoContent)
	})
	s := &Server{URL: base, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ex: ex}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops the server and waits for it.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	s.wg.Wait()
	return err
}

// Answers returns the answers the agent received to its question, in
// order: a test counts them to prove an answer reached it exactly once.
func (s *Server) Answers() []string {
	s.ex.mu.Lock()
	defer s.ex.mu.Unlock()
	return append([]string(nil), s.ex.answers...)
}

// SignIn lets one waiting "auth" execution go on.
func (s *Server) SignIn() { s.ex.signIn() }

func (e *executor) signIn() {
	select {
	case e.signin <- struct{}{}:
	default:
	}
}

// Cancels returns how many CancelTask calls reached the executor.
func (s *Server) Cancels() int {
	s.ex.mu.Lock()
	defer s.ex.mu.Unlock()
	return s.ex.cancels
}

type executor struct {
	signin  chan struct{} // one value per sign-in
	mu      sync.Mutex
	answers []string
	cancels int
}

var _ a2asrv.AgentExecutor = (*executor)(nil)

func textOf(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := strings.TrimSpace(textOf(ec.Message))
		say := func(state a2a.TaskState, s string) bool {
			var msg *a2a.Message
			if s != "" {
				msg = a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(s))
			}
			return yield(a2a.NewStatusUpdateEvent(ec, state, msg), nil)
		}
		if ec.StoredTask == nil {
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
		} else if ec.StoredTask.Status.State == a2a.TaskStateInputRequired {
			// The answer to the question.
			e.mu.Lock()
			e.answers = append(e.answers, text)
			e.mu.Unlock()
			if say(a2a.TaskStateWorking, "") && say(a2a.TaskStateWorking, "you said: "+text) {
				say(a2a.TaskStateCompleted, "")
			}
			return
		}
		if !say(a2a.TaskStateWorking, "") {
			return
		}
		switch strings.ToLower(text) {
		case "hello":
			for _, c := range HelloChunks {
				if !say(a2a.TaskStateWorking, c) {
					return
				}
			}
			if !yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart(HelloArtifact)), nil) {
				return
			}
			say(a2a.TaskStateCompleted, "")
		case "ask":
			say(a2a.TaskStateInputRequired, Question)
		case "auth":
			// A2A 1.0: the credential arrives out of band and the same
			// execution goes on.
			if !say(a2a.TaskStateAuthRequired, AuthPrompt) {
				return
			}
			select {
			case <-e.signin:
			case <-ctx.Done():
				return
			}
			if say(a2a.TaskStateWorking, "signed in") {
				say(a2a.TaskStateCompleted, "")
			}
		case "fail":
			say(a2a.TaskStateFailed, FailMessage)
		case "image":
			for _, p := range ec.Message.Parts {
				if raw := p.Raw(); raw != nil {
					if !say(a2a.TaskStateWorking, fmt.Sprintf("file %s %s %d bytes", p.Filename, p.MediaType, len(raw))) {
						return
					}
				}
			}
			say(a2a.TaskStateCompleted, "")
		case "slow":
			for i := range SlowChunks {
				select {
				case <-ctx.Done():
					return
				case <-time.After(SlowInterval):
				}
				if !say(a2a.TaskStateWorking, "chunk "+string(rune('0'+i))+" ") {
					return
				}
			}
			say(a2a.TaskStateCompleted, "")
		default:
			if say(a2a.TaskStateWorking, "echo: "+text) {
				say(a2a.TaskStateCompleted, "")
			}
		}
	}
}

func (e *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		e.mu.Lock()
		e.cancels++
		e.mu.Unlock()
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}
