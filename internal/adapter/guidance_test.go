package adapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
)

// Guidance faults the embedded agent cannot produce on demand: a client
// that leaves while the guidance stream is open, and the failure frames of
// protocol.md §5.13. The server tests cover the ordinary path against it.

// guidanceRequest is a pipeline-mode guidance request.
func (f *fixture) guidanceRequest(t *testing.T, thread, run, text string) adapter.Request {
	t.Helper()
	ic := map[string]any{"schemaVersion": 1, "rosInvocationId": "inv-1", "cwd": filepath.Join(f.root, "ws"),
		"runMode": "pipeline", "activeGuidance": true, "guidanceId": "g-" + run}
	body := map[string]any{
		"threadId": thread, "runId": run, "state": map[string]any{}, "tools": []any{}, "context": []any{},
		"messages":       []any{map[string]any{"id": "m-" + run, "role": "user", "content": text}},
		"forwardedProps": map[string]any{"iacCode": ic},
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

// gated streams list, then blocks until release is closed (or its
// context ends), then streams after, then ends with err (io.EOF when nil).
type gated struct {
	ctx     context.Context
	list    []*a2a.Event
	release chan struct{}
	after   []*a2a.Event
	onBlock func()
	err     error
	i       int
}

func (g *gated) Next() (*a2a.Event, error) {
	if g.i < len(g.list) {
		g.i++
		return g.list[g.i-1], nil
	}
	if g.release != nil {
		if g.onBlock != nil {
			g.onBlock()
		}
		select {
		case <-g.release:
			g.release = nil
		case <-g.ctx.Done():
			return nil, g.ctx.Err()
		}
	}
	if len(g.after) > 0 {
		ev := g.after[0]
		g.after = g.after[1:]
		return ev, nil
	}
	if g.err != nil {
		return nil, g.err
	}
	return nil, io.EOF
}
func (g *gated) Buffered() bool { return false }
func (g *gated) Close() error   { return nil }

// gatedUpstream serves SendStreamingMessage from stream (recording the
// call) and everything else from the scripted upstream.
type gatedUpstream struct {
	*scripted
	stream func(ctx context.Context, p *a2a.SendParams) *gated
	params []*a2a.SendParams
}

func (u *gatedUpstream) SendStreamingMessage(ctx context.Context, p *a2a.SendParams) (adapter.Stream, error) {
	u.record(call{Method: "SendStreamingMessage", TaskID: p.TaskID, Parts: partsOf(p)})
	u.mu.Lock()
	u.params = append(u.params, p)
	u.mu.Unlock()
	return u.stream(ctx, p), nil
}

// TestGuidanceDisconnectCancelsNothing: the guidance client leaves while
// its stream is open; no CancelTask, the execution and the active run
// stay, and the pipeline run goes on to its end.
func TestGuidanceDisconnectCancelsNothing(t *testing.T) {
	release := make(chan struct{})
	clientCtx, leave := context.WithCancel(context.Background())
	up := &gatedUpstream{scripted: &scripted{}}
	up.stream = func(ctx context.Context, p *a2a.SendParams) *gated {
		if p.TaskID == "" { // the pipeline run: working, blocked, completed
			return &gated{ctx: ctx, list: []*a2a.Event{status("task-1", p.ContextID, "session-1", "TASK_STATE_WORKING", nil)},
				release: release, after: []*a2a.Event{status("task-1", p.ContextID, "session-1", "TASK_STATE_COMPLETED", nil)}}
		}
		// The guidance: acknowledged, then open until the client leaves.
		return &gated{ctx: ctx, list: []*a2a.Event{status("task-1", p.ContextID, "session-1", "TASK_STATE_WORKING", nil)},
			release: make(chan struct{}), onBlock: leave}
	}
	f := newFixture(t, up.scripted, fixtureOptions{})
	f.a = newAdapterWith(t, f, up)

	mainReq := f.request(t, "th", "run-1", "Run the pipeline", nil)
	mainRun, err := f.a.Admit(context.Background(), mainReq)
	if err != nil {
		t.Fatal(err)
	}
	mainSink := &sink{}
	done := make(chan struct{})
	go func() { mainRun.Stream(context.Background(), mainSink); close(done) }()
	waitFor(t, func() bool { d := loadDoc(t, f.store, "th"); return d.Execution.TaskID != nil })

	g, err := f.a.Admit(context.Background(), f.guidanceRequest(t, "th", "run-g", "use two zones"))
	if err != nil {
		t.Fatalf("guidance refused: %v", err)
	}
	gs := &sink{}
	g.Stream(clientCtx, gs)
	if _, ok := gs.evs[0].(*agui.RunStarted); len(gs.evs) != 1 || !ok {
		t.Fatalf("guidance of a gone client wrote %v", gs.evs)
	}
	p := up.params[1]
	if p.TaskID != "task-1" || p.MessageID != "m-run-g" || p.Metadata["guidance_id"] != "g-run-g" || partsOf(p)[0] != "use two zones" {
		t.Fatalf("guidance sent as %+v", p)
	}
	if n := up.count("CancelTask"); n != 0 {
		t.Fatalf("%d CancelTask after the guidance client left", n)
	}
	// run-1 is still the active run.
	if _, err := f.a.Admit(context.Background(), f.request(t, "th", "run-2", "hello", nil)); codeOf(err) != adapter.CodeThreadBusy {
		t.Fatalf("ordinary turn during the pipeline: %v", err)
	}
	doc := loadDoc(t, f.store, "th")
	if len(doc.TerminalExecutionIDs) != 0 || doc.RunDigests["run-g"] == "" {
		t.Fatalf("guidance changed the execution: %+v", doc)
	}
	close(release)
	<-done
	if fin, ok := mainSink.last(t).(*agui.RunFinished); !ok || fin.Outcome.Type != agui.OutcomeSuccess {
		t.Fatalf("pipeline run ended %#v", mainSink.last(t))
	}
	if n := up.count("CancelTask"); n != 0 {
		t.Fatalf("%d CancelTask calls", n)
	}
}

// TestGuidanceClientGoneBeforeSend: an admitted guidance is delivered even
// when its client left before the message went out.
func TestGuidanceClientGoneBeforeSend(t *testing.T) {
	up := &gatedUpstream{scripted: &scripted{}}
	release := make(chan struct{})
	up.stream = func(ctx context.Context, p *a2a.SendParams) *gated {
		g := &gated{ctx: ctx, list: []*a2a.Event{status("task-1", p.ContextID, "session-1", "TASK_STATE_WORKING", nil)}}
		if p.TaskID == "" {
			g.release = release
		}
		return g
	}
	f := newFixture(t, up.scripted, fixtureOptions{})
	f.a = newAdapterWith(t, f, up)
	done := startPipeline(t, f)
	defer func() { close(release); <-done }()
	g, err := f.a.Admit(context.Background(), f.guidanceRequest(t, "th", "run-g", "steer"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &sink{err: errors.New("client gone")}
	g.Stream(ctx, s)
	if n := up.count("SendStreamingMessage"); n != 2 || up.params[1].TaskID != "task-1" {
		t.Fatalf("guidance not delivered: %d sends", n)
	}
	if n := up.count("CancelTask"); n != 0 {
		t.Fatalf("%d CancelTask calls", n)
	}
}

// newAdapterWith is f's adapter talking to up instead of f.up.
func newAdapterWith(t *testing.T, f *fixture, up adapter.Upstream) *adapter.Adapter {
	t.Helper()
	return adapter.New(adapter.Options{Store: f.store, Upstream: up, AllowedRoots: request.AllowedRoots([]string{f.root})})
}

// startPipeline streams run-1 of thread "th" in the background until its
// task id is durable; the returned channel closes when the run ended.
func startPipeline(t *testing.T, f *fixture) chan struct{} {
	t.Helper()
	r, err := f.a.Admit(context.Background(), f.request(t, "th", "run-1", "Run the pipeline", nil))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { r.Stream(context.Background(), &sink{}); close(done) }()
	waitFor(t, func() bool { return loadDoc(t, f.store, "th").Execution.TaskID != nil })
	return done
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not reached within 5 s")
}

// TestGuidanceStreamFailures: each failure frame of protocol.md §5.13 ends
// the guidance run with its RUN_ERROR, and none cancels the task.
func TestGuidanceStreamFailures(t *testing.T) {
	cases := []struct {
		name      string
		frame     func(ctxID string) *a2a.Event
		err       error
		code, msg string
	}{
		{"failed", func(c string) *a2a.Event { return status("task-1", c, "session-1", "TASK_STATE_FAILED", nil) }, nil,
			adapter.CodeA2AExecutionFailed, "The A2A execution failed."},
		{"canceled", func(c string) *a2a.Event { return status("task-1", c, "session-1", "TASK_STATE_CANCELED", nil) }, nil,
			adapter.CodeCancelled, "The execution was cancelled."},
		{"other task", func(c string) *a2a.Event { return status("task-2", c, "session-1", "TASK_STATE_WORKING", nil) }, nil,
			adapter.CodeA2AProtocolError, "The A2A task identity changed unexpectedly."},
		{"other session", func(c string) *a2a.Event { return status("task-1", c, "session-2", "TASK_STATE_WORKING", nil) }, nil,
			adapter.CodeA2AProtocolError, "The iac-code session identity changed unexpectedly."},
		{"json-rpc error", nil, &a2a.RPCError{Code: -32602, Message: "Task task-1 is in terminal state: 3"},
			adapter.CodeA2AUnavailable, "The local A2A execution service is unavailable."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up := &gatedUpstream{scripted: &scripted{}}
			release := make(chan struct{})
			up.stream = func(ctx context.Context, p *a2a.SendParams) *gated {
				if p.TaskID == "" {
					return &gated{ctx: ctx, list: []*a2a.Event{status("task-1", p.ContextID, "session-1", "TASK_STATE_WORKING", nil)}, release: release}
				}
				g := &gated{ctx: ctx, err: c.err}
				if c.frame != nil {
					g.list = []*a2a.Event{c.frame(p.ContextID)}
				}
				return g
			}
			f := newFixture(t, up.scripted, fixtureOptions{})
			f.a = newAdapterWith(t, f, up)
			done := startPipeline(t, f)
			defer func() { close(release); <-done }()
			s, err := f.run(t, f.guidanceRequest(t, "th", "run-g", "steer"))
			if err != nil {
				t.Fatal(err)
			}
			e, ok := s.last(t).(*agui.RunError)
			if !ok || e.Code != c.code || e.Message != c.msg || len(s.evs) != 2 {
				t.Fatalf("got %#v (%d events)", s.last(t), len(s.evs))
			}
			if n := up.count("CancelTask"); n != 0 {
				t.Fatalf("%d CancelTask calls", n)
			}
		})
	}
}
