package adapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// scripted is a scripted A2A upstream. It is a fake on purpose: these tests
// drive exact event sequences and faults at exact steps (a stream that
// ends early, a write that fails), which the embedded agent cannot produce
// on demand; the server and e2e tests cover the same paths against it.
// Every field may be nil: the default answers an ordinary completed turn.
type scripted struct {
	mu    sync.Mutex
	calls []call

	send      func(p *a2a.SendParams) ([]*a2a.Event, error)
	subscribe func(taskID string) ([]*a2a.Event, error)
	getTask   func(taskID string) (*a2a.Event, error)
	// cancel runs inside CancelTask (a test may block in it).
	cancel func(taskID string) error
	// pipeline answers PipelineState (nil: 404, no pipeline).
	pipeline func(taskID string, after int64) (*a2a.PipelineState, error)
	// onSendMessage runs inside SendMessage; onContext sees each new
	// turn's context id.
	onSendMessage func()
	onContext     func(contextID string)
	// unbuffered streams never report a buffered frame, as a network
	// stream whose next frame has not arrived yet.
	unbuffered bool
}

type call struct {
	Method string
	TaskID string
	Parts  []string // text of text parts, JSON of data parts
}

func (s *scripted) record(c call) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

// count returns how many calls of method were made.
func (s *scripted) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c.Method == method {
			n++
		}
	}
	return n
}

func partsOf(p *a2a.SendParams) []string {
	var out []string
	for _, part := range p.Parts {
		if t := part.Text(); t != "" {
			out = append(out, t)
			continue
		}
		b, _ := json.Marshal(part.Data())
		out = append(out, string(b))
	}
	return out
}

func (s *scripted) SendStreamingMessage(_ context.Context, p *a2a.SendParams) (adapter.Stream, error) {
	s.record(call{Method: "SendStreamingMessage", TaskID: p.TaskID, Parts: partsOf(p)})
	if s.onContext != nil && p.TaskID == "" {
		s.onContext(p.ContextID)
	}
	if s.send == nil {
		return &events{list: turn("task-1", p.ContextID, "session-1")}, nil
	}
	list, err := s.send(p)
	if err != nil {
		return nil, err
	}
	return &events{list: list, unbuffered: s.unbuffered}, nil
}

func (s *scripted) SubscribeToTask(_ context.Context, taskID string) (adapter.Stream, error) {
	s.record(call{Method: "SubscribeToTask", TaskID: taskID})
	if s.subscribe == nil {
		return &events{}, nil
	}
	list, err := s.subscribe(taskID)
	if err != nil {
		return nil, err
	}
	return &events{list: list}, nil
}

func (s *scripted) SendMessage(_ context.Context, p *a2a.SendParams) (*a2a.Event, error) {
	s.record(call{Method: "SendMessage", TaskID: p.TaskID, Parts: partsOf(p)})
	if s.onSendMessage != nil {
		s.onSendMessage()
	}
	return &a2a.Event{Kind: a2a.KindTask, TaskID: p.TaskID}, nil
}

func (s *scripted) GetTask(_ context.Context, taskID string, _ int) (*a2a.Event, error) {
	s.record(call{Method: "GetTask", TaskID: taskID})
	if s.getTask == nil {
		return nil, &a2a.RPCError{Code: a2a.CodeTaskNotFound, Message: "Task not found"}
	}
	return s.getTask(taskID)
}

func (s *scripted) CancelTask(_ context.Context, taskID string) (*a2a.Event, error) {
	s.record(call{Method: "CancelTask", TaskID: taskID})
	if s.cancel != nil {
		if err := s.cancel(taskID); err != nil {
			return nil, err
		}
	}
	return &a2a.Event{Kind: a2a.KindTask, TaskID: taskID, Status: &a2a.Status{State: "TASK_STATE_CANCELED"}}, nil
}

func (s *scripted) EnsureRestored(_ context.Context, _, _, _ string) (string, error) {
	s.record(call{Method: "EnsureRestored"})
	return "current", nil
}

func (s *scripted) PipelineState(_ context.Context, taskID string, after int64) (*a2a.PipelineState, error) {
	s.record(call{Method: "PipelineState", TaskID: taskID, Parts: []string{"after=" + itoa(int(after))}})
	if s.pipeline == nil {
		return nil, a2a.ErrNotFound
	}
	return s.pipeline(taskID, after)
}

// events is a scripted stream.
type events struct {
	list []*a2a.Event
	err  error // returned after the list instead of io.EOF
	i    int
	// unbuffered: Buffered is always false (scripted.unbuffered).
	unbuffered bool
}

func (e *events) Next() (*a2a.Event, error) {
	if e.i < len(e.list) {
		e.i++
		return e.list[e.i-1], nil
	}
	if e.err != nil {
		return nil, e.err
	}
	return nil, io.EOF
}
func (e *events) Buffered() bool { return !e.unbuffered && e.i < len(e.list) }
func (e *events) Close() error   { return nil }

// Event builders. Identities ride on every frame, as iac-code sends them.
func status(task, ctxID, session, st string, iac map[string]any) *a2a.Event {
	if iac == nil {
		iac = map[string]any{}
	}
	iac["iacCodeSessionId"] = session
	return &a2a.Event{Kind: a2a.KindStatusUpdate, TaskID: task, ContextID: ctxID,
		Status: &a2a.Status{State: st}, Metadata: map[string]any{"iac_code": iac}}
}

// turn is an ordinary turn: working, then completed.
func turn(task, ctxID, session string) []*a2a.Event {
	return []*a2a.Event{
		status(task, ctxID, session, "TASK_STATE_WORKING", nil),
		status(task, ctxID, session, "TASK_STATE_COMPLETED", nil),
	}
}

// permissionInput is a normal-mode permission request (protocol.md §5.1).
func permissionInput(task, ctxID, inputID string) map[string]any {
	return map[string]any{
		"schemaVersion": 1, "kind": "permission", "required": true,
		"requestTaskId": task, "contextId": ctxID, "inputId": inputID,
		"toolUseId": "toolu-" + inputID, "toolName": "bash", "title": "Run a command",
		"secretArgument": "never persisted",
	}
}

// waiting is the task waiting for the permission input.
func waiting(task, ctxID, session, inputID string) *a2a.Event {
	return status(task, ctxID, session, "TASK_STATE_INPUT_REQUIRED", map[string]any{"input": permissionInput(task, ctxID, inputID)})
}

// sink collects a run's events.
type sink struct {
	mu  sync.Mutex
	evs []agui.Event
	err error // returned by every write (a gone client)
}

func (s *sink) WriteBatch(evs []agui.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.evs = append(s.evs, evs...)
	return nil
}

// last is the run's terminal event.
func (s *sink) last(t *testing.T) agui.Event {
	t.Helper()
	if len(s.evs) == 0 {
		t.Fatal("no event")
	}
	return s.evs[len(s.evs)-1]
}

// fixture is an adapter over a scripted upstream and a store.
type fixture struct {
	a     *adapter.Adapter
	up    *scripted
	store state.Store
	root  string
}

type fixtureOptions struct {
	store      state.Store
	maxCached  int
	copilotKit bool
	tracer     trace.Tracer
}

func newFixture(t *testing.T, up *scripted, o fixtureOptions) *fixture {
	t.Helper()
	if o.store == nil {
		o.store = state.NewMemStore()
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := adapter.New(adapter.Options{Store: o.store, Upstream: up, AllowedRoots: request.AllowedRoots([]string{root}), MaxCachedThreads: o.maxCached, CopilotKitCompat: o.copilotKit,
		Tracer: o.tracer})
	return &fixture{a: a, up: up, store: o.store, root: root}
}

// request builds an admitted-shape request: a new turn when resume is
// nil, else a resume with those entries.
func (f *fixture) request(t *testing.T, thread, run, text string, resume []agui.ResumeEntry) adapter.Request {
	t.Helper()
	ic := map[string]any{"schemaVersion": 1, "rosInvocationId": "inv-1", "cwd": filepath.Join(f.root, "ws")}
	msgs := []any{}
	if text != "" {
		msgs = append(msgs, map[string]any{"id": "m-" + run, "role": "user", "content": text})
	}
	body := map[string]any{
		"threadId": thread, "runId": run, "state": map[string]any{}, "messages": msgs,
		"tools": []any{}, "context": []any{}, "forwardedProps": map[string]any{"iacCode": ic},
	}
	if resume != nil {
		body["resume"] = resume
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	in, err := agui.DecodeRunAgentInput(raw)
	if err != nil {
		t.Fatal(err)
	}
	return adapter.Request{Input: in, Body: raw, Lang: i18n.EN}
}

// run admits and streams one request; it returns the admission error or
// the events written.
func (f *fixture) run(t *testing.T, req adapter.Request) (*sink, error) {
	t.Helper()
	r, err := f.a.Admit(context.Background(), req)
	if err != nil {
		return nil, err
	}
	s := &sink{}
	r.Stream(context.Background(), s)
	return s, nil
}

func allow(id string) []agui.ResumeEntry {
	return []agui.ResumeEntry{{InterruptID: id, Status: agui.ResumeResolved, Payload: json.RawMessage(`{"decision":"allow_once"}`)}}
}

func codeOf(err error) string {
	var e *adapter.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// loadDoc reads the stored document of a thread.
func loadDoc(t *testing.T, s state.Store, thread string) *state.Thread {
	t.Helper()
	doc, _, err := s.Load(context.Background(), thread)
	if err != nil {
		t.Fatalf("load %s: %v", thread, err)
	}
	return doc
}
