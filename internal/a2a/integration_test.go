package a2a_test

// Integration tests: the client against the embedded demo agent over real
// loopback HTTP, for every method and behaviour of upstream.md that the
// adapter relies on (issue 3). Expected values come from the spec and the
// demo agent's documented script (docs/demo-agent.md).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
)

const token = "tok"

type env struct {
	c   *a2a.Client
	url string
	cwd string
	ctx context.Context
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv, err := demoagent.Start(context.Background(), "127.0.0.1:0", demoagent.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	// A bound on every call so a hang fails the test instead of blocking it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return &env{c: a2a.New(srv.URL, token), url: srv.URL, cwd: t.TempDir(), ctx: ctx}
}

func (e *env) msg(text string) *a2a.SendParams {
	return &a2a.SendParams{Parts: []*a2asdk.Part{a2asdk.NewTextPart(text)}, Metadata: map[string]any{"cwd": e.cwd}}
}

func (e *env) stream(t *testing.T, p *a2a.SendParams) *a2a.Stream {
	t.Helper()
	st, err := e.c.SendStreamingMessage(e.ctx, p)
	if err != nil {
		t.Fatalf("SendStreamingMessage: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// drain reads a stream to its end; the error is what ended it (io.EOF
// for a clean end).
func drain(st *a2a.Stream) ([]*a2a.Event, error) {
	var evs []*a2a.Event
	for {
		ev, err := st.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func drainOK(t *testing.T, st *a2a.Stream) []*a2a.Event {
	t.Helper()
	evs, err := drain(st)
	if err != io.EOF {
		t.Fatalf("stream ended with %v after %d events, want io.EOF", err, len(evs))
	}
	return evs
}

// until reads events until pred matches and returns them all.
func until(t *testing.T, st *a2a.Stream, pred func(*a2a.Event) bool) []*a2a.Event {
	t.Helper()
	var evs []*a2a.Event
	for {
		ev, err := st.Next()
		if err != nil {
			t.Fatalf("stream ended with %v after %d events before the awaited one", err, len(evs))
		}
		evs = append(evs, ev)
		if pred(ev) {
			return evs
		}
	}
}

func hasInput(ev *a2a.Event) bool { return ev.IacCode()["input"] != nil }

func kindsStates(evs []*a2a.Event) (kinds, states []string) {
	for _, ev := range evs {
		kinds = append(kinds, string(ev.Kind))
		states = append(states, ev.State())
	}
	return
}

func wantRPC(t *testing.T, err error, code int, msgPrefix string) *a2a.RPCError {
	t.Helper()
	var re *a2a.RPCError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v (%T), want *a2a.RPCError %d", err, err, code)
	}
	if re.Code != code || !strings.HasPrefix(re.Message, msgPrefix) {
		t.Fatalf("RPCError = %d %q, want %d %q…", re.Code, re.Message, code, msgPrefix)
	}
	return re
}

// permReply is the §4.2 data-part answer with exactly the six keys.
func permReply(taskID, contextID string, input map[string]any, decision string) *a2a.SendParams {
	p := a2asdk.NewDataPart(map[string]any{"schemaVersion": 1, "kind": "permission", "requestTaskId": taskID,
		"inputId": input["inputId"], "toolUseId": input["toolUseId"], "decision": decision})
	p.MediaType = "application/json"
	return &a2a.SendParams{TaskID: taskID, ContextID: contextID, Parts: []*a2asdk.Part{p}}
}

func TestAgentNormalTurnStream(t *testing.T) {
	e := newEnv(t)
	evs := drainOK(t, e.stream(t, e.msg("Create a VPC")))
	kinds, states := kindsStates(evs)
	wantKinds := "task statusUpdate statusUpdate statusUpdate statusUpdate statusUpdate statusUpdate statusUpdate statusUpdate " +
		"statusUpdate statusUpdate statusUpdate artifactUpdate statusUpdate statusUpdate statusUpdate statusUpdate"
	wantStates := "submitted submitted working working working working working working working working working working  " +
		"working working working input-required"
	if strings.Join(kinds, " ") != wantKinds || strings.Join(states, " ") != wantStates {
		t.Fatalf("kinds = %v\nstates = %v", kinds, states)
	}
	task := evs[0]
	if task.TaskID == "" || task.ContextID == "" || len(task.History) != 1 || task.History[0].Text() != "Create a VPC" ||
		task.History[0].Role != a2a.RoleUser || task.Metadata != nil {
		t.Fatalf("initial task = %+v", task)
	}
	var deltas strings.Builder
	sid := evs[1].IacCode()["iacCodeSessionId"]
	for i, ev := range evs[1:] {
		if ev.TaskID != task.TaskID || ev.ContextID != task.ContextID {
			t.Fatalf("event %d ids = %s/%s", i+1, ev.TaskID, ev.ContextID)
		}
		if ev.Kind == a2a.KindStatusUpdate && (sid == "" || ev.IacCode()["iacCodeSessionId"] != sid) {
			t.Fatalf("event %d iacCodeSessionId = %v, want %v", i+1, ev.IacCode()["iacCodeSessionId"], sid)
		}
		if m := ev.Status; m != nil && m.Message != nil && m.Message.MessageID == task.TaskID+"-message" {
			deltas.WriteString(m.Message.Text())
		}
	}
	if evs[1].Status.Timestamp == "" || evs[2].Status.Timestamp == "" {
		t.Fatal("SUBMITTED/WORKING updates carry no timestamp")
	}
	text := deltas.String()
	intro := "Writing vpc.yaml in " + e.cwd + ".\n\n```yaml\nROSTemplateFormatVersion: '2015-09-01'\n"
	if !strings.HasPrefix(text, intro) || !strings.HasSuffix(text, "```\n\nThe template is ready to deploy.") {
		t.Fatalf("concatenated deltas = %q", text)
	}
	final := evs[15]
	if fin, _ := final.IacCode()["assistantFinal"].(map[string]any); fin["complete"] != true ||
		final.Status.Message.MessageID != task.TaskID+"-2" || final.Status.Message.Text() != text {
		t.Fatalf("assistantFinal frame = %+v / %+v", final.IacCode(), final.Status.Message)
	}
	if evs[16].Status.Message != nil || hasInput(evs[16]) {
		t.Fatalf("end of turn carries a message or an input: %+v", evs[16])
	}
	usage, _ := evs[14].IacCode()["usage"].(map[string]any)
	in, ok1 := a2a.Int(usage["inputTokens"])
	out, ok2 := a2a.Int(usage["outputTokens"])
	tot, ok3 := a2a.Int(usage["totalTokens"])
	if _, isFloat := usage["inputTokens"].(float64); !isFloat || !ok1 || !ok2 || !ok3 || in != 1200 || out != 350 || tot != 1550 {
		t.Fatalf("usage = %#v", usage)
	}
	// The artifact describes exactly the template the deltas showed.
	body := text[strings.Index(text, "```yaml\n")+len("```yaml\n") : strings.LastIndex(text, "```\n\n")]
	sum := sha256.Sum256([]byte(body))
	art := evs[12].Artifact
	meta, _ := art["metadata"].(map[string]any)
	size, _ := a2a.Int(meta["byteSize"])
	uri, _ := meta["uri"].(string)
	if art["name"] != "vpc.yaml" || meta["sha256"] != hex.EncodeToString(sum[:]) || size != int64(len(body)) ||
		!strings.HasPrefix(uri, "iac-code-artifact://") || meta["sourcePath"] != e.cwd+"/vpc.yaml" {
		t.Fatalf("artifact = %#v (body %d bytes)", art, len(body))
	}
	tool, _ := evs[13].IacCode()["tool"].(map[string]any)
	if tool["status"] != "completed" || tool["name"] != "write_file" {
		t.Fatalf("frame after the artifact = %#v, want the tool's completed trace", tool)
	}

	// GetTask: the history holds the user message, each replaced delta and
	// the final text; historyLength keeps the newest entries.
	all, err := e.c.GetTask(e.ctx, task.TaskID, -1)
	if err != nil || all.Kind != a2a.KindTask || all.State() != a2a.StateInputRequired || len(all.History) != 7 ||
		all.History[0].Text() != "Create a VPC" || all.IacCode()["iacCodeSessionId"] != sid || len(all.Artifacts) != 1 {
		t.Fatalf("GetTask = %+v, %v", all, err)
	}
	two, err := e.c.GetTask(e.ctx, task.TaskID, 2)
	if err != nil || len(two.History) != 2 || two.History[0].Text() != "The template is ready to deploy." || two.History[1].Text() != text {
		t.Fatalf("GetTask(historyLength 2) = %+v, %v", two, err)
	}
	if zero, err := e.c.GetTask(e.ctx, task.TaskID, 0); err != nil || len(zero.History) != 0 {
		t.Fatalf("GetTask(historyLength 0) = %+v, %v", zero, err)
	}
	_, err = e.c.GetTask(e.ctx, "no-such-task", -1)
	wantRPC(t, err, a2a.CodeTaskNotFound, "Task not found")

	// A finished normal turn is neither cancelable nor subscribable.
	_, err = e.c.CancelTask(e.ctx, task.TaskID)
	wantRPC(t, err, a2a.CodeTaskNotCancelable, "Task cannot be canceled")
	_, err = e.c.CancelTask(e.ctx, "no-such-task")
	wantRPC(t, err, a2a.CodeTaskNotFound, "Task not found")
	// The plain-JSON answer to a stream request is the call's own error.
	st, err := e.c.SubscribeToTask(e.ctx, task.TaskID)
	wantRPC(t, err, a2a.CodeTaskNotFound, "Task "+task.TaskID+" is not active")
	if st != nil {
		t.Fatal("SubscribeToTask returned a stream with its error")
	}
	_, err = e.c.SubscribeToTask(e.ctx, "no-such-task")
	wantRPC(t, err, a2a.CodeTaskNotFound, "Task not found")
	// A follow-up turn on the same context reuses the session.
	p := e.msg("Create a bucket")
	p.ContextID = task.ContextID
	ev, err := e.c.SendMessage(e.ctx, p)
	if err != nil || ev.Kind != a2a.KindTask || ev.State() != a2a.StateInputRequired || ev.ContextID != task.ContextID ||
		ev.IacCode()["iacCodeSessionId"] != sid || len(ev.Artifacts) != 1 || ev.Artifacts[0]["name"] != "bucket.yaml" {
		t.Fatalf("SendMessage = %+v, %v", ev, err)
	}
}

func TestAgentUnauthorized(t *testing.T) {
	e := newEnv(t)
	bad := a2a.New(e.url, "wrong-token")
	check := func(name string, err error) {
		t.Helper()
		var he *a2a.HTTPError
		if !errors.As(err, &he) || he.StatusCode != 401 || he.Body != `{"error":"Unauthorized"}` {
			t.Fatalf("%s: err = %v (%T), want *HTTPError 401 {\"error\":\"Unauthorized\"}", name, err, err)
		}
		if strings.Contains(err.Error(), "wrong-token") {
			t.Fatalf("%s: error %q leaks the token", name, err)
		}
	}
	_, err := bad.SendStreamingMessage(e.ctx, e.msg("hi"))
	check("SendStreamingMessage", err)
	_, err = bad.SendMessage(e.ctx, e.msg("hi"))
	check("SendMessage", err)
	check("Health", bad.Health(e.ctx))
	_, err = bad.PipelineState(e.ctx, "t", -1)
	check("PipelineState", err)
	if err := e.c.Health(e.ctx); err != nil {
		t.Fatalf("Health with the right token: %v", err)
	}
}

func TestAgentCancelActiveTaskAndTerminalTask(t *testing.T) {
	e := newEnv(t)
	st := e.stream(t, e.msg("cancel me"))
	evs := until(t, st, func(ev *a2a.Event) bool { return ev.Status != nil && ev.Status.Message != nil })
	tid := evs[0].TaskID
	// A second watcher: the initial task frame, then live frames.
	sub, err := e.c.SubscribeToTask(e.ctx, tid)
	if err != nil {
		t.Fatalf("SubscribeToTask: %v", err)
	}
	defer sub.Close()
	first, err := sub.Next()
	if err != nil || first.Kind != a2a.KindTask || first.TaskID != tid || first.State() != a2a.StateWorking {
		t.Fatalf("first subscribe frame = %+v, %v", first, err)
	}
	if live, err := sub.Next(); err != nil || live.Kind != a2a.KindStatusUpdate || live.Status.Message.Text() != "Still working. " {
		t.Fatalf("live subscribe frame = %+v, %v", live, err)
	}
	ev, err := e.c.CancelTask(e.ctx, tid)
	if err != nil || ev.Kind != a2a.KindTask || ev.TaskID != tid || ev.State() != a2a.StateCanceled ||
		ev.Status.Message == nil || ev.Status.Message.Text() != "Task canceled." {
		t.Fatalf("CancelTask = %+v, %v", ev, err)
	}
	for name, s := range map[string]*a2a.Stream{"original": st, "subscription": sub} {
		rest := drainOK(t, s)
		if len(rest) == 0 || rest[len(rest)-1].State() != a2a.StateCanceled {
			t.Fatalf("%s stream did not end canceled (%d events)", name, len(rest))
		}
	}
	p := e.msg("more")
	p.TaskID = tid
	_, err = e.c.SendMessage(e.ctx, p)
	wantRPC(t, err, a2a.CodeInvalidParams, "Task "+tid+" is in terminal state")
	_, err = e.c.SendStreamingMessage(e.ctx, p)
	wantRPC(t, err, a2a.CodeInvalidParams, "Task "+tid+" is in terminal state")
}

func TestAgentStreamErrorFrame(t *testing.T) {
	e := newEnv(t)
	st := e.stream(t, e.msg("stream error"))
	var states []string
	for {
		ev, err := st.Next()
		if err != nil {
			wantRPC(t, err, a2a.CodeInternalError, "Internal error")
			break
		}
		states = append(states, ev.State())
	}
	if strings.Join(states, " ") != "submitted submitted working" {
		t.Fatalf("states before the error frame = %v", states)
	}
	if _, err := st.Next(); err != io.EOF {
		t.Fatalf("after the error frame: %v, want io.EOF", err)
	}
}

// raceEnabled reports a -race build: the race detector slows the
// in-process agent and client about sixfold.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// TestFloodAndLargeFrame reads n one-character deltas and the n-byte
// assistantFinal frame that repeats them: 200,000 (a ~200 KB frame), or
// 20,000 under -race to keep the run short.
func TestAgentFloodAndLargeFrame(t *testing.T) {
	n := 200000
	if raceEnabled() {
		n = 20000
	}
	e := newEnv(t)
	evs := drainOK(t, e.stream(t, e.msg("flood "+strconv.Itoa(n))))
	if len(evs) != n+5 {
		t.Fatalf("frames = %d, want %d", len(evs), n+5)
	}
	deltas := 0
	for _, ev := range evs[3 : n+3] {
		if ev.Status.Message.Text() != "x" {
			t.Fatalf("delta = %+v", ev.Status.Message)
		}
		deltas++
	}
	final := evs[n+3].Status.Message.Text()
	if deltas != n || final != strings.Repeat("x", n) || evs[n+4].State() != a2a.StateInputRequired {
		t.Fatalf("deltas %d, final %d chars, last state %s", deltas, len(final), evs[n+4].State())
	}

	// The same large frame over a client capped below its size.
	small := a2a.New(e.url, token, a2a.WithMaxFrameBytes(1024))
	st, err := small.SendStreamingMessage(e.ctx, e.msg("flood 2000"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := drain(st)
	if !errors.Is(err, a2a.ErrFrameTooLarge) || len(got) != 2003 {
		t.Fatalf("capped client: %d events, %v; want 2003 then ErrFrameTooLarge", len(got), err)
	}
	if _, err := st.Next(); !errors.Is(err, a2a.ErrFrameTooLarge) {
		t.Fatalf("Next after ErrFrameTooLarge = %v", err)
	}
}

func TestAgentEnsureRestored(t *testing.T) {
	e := newEnv(t)
	plain, err := e.c.SendMessage(e.ctx, e.msg("Create a VPC"))
	if err != nil {
		t.Fatal(err)
	}
	sid, _ := plain.IacCode()["iacCodeSessionId"].(string)
	if got, err := e.c.EnsureRestored(e.ctx, e.cwd, sid, plain.TaskID); err != nil || got != a2a.RestoreCurrent {
		t.Fatalf("EnsureRestored = %q, %v; want current", got, err)
	}
	if _, err := e.c.EnsureRestored(e.ctx, e.cwd, "no-such-session", plain.TaskID); !errors.Is(err, a2a.ErrSessionUnavailable) {
		t.Fatalf("unknown session: %v, want ErrSessionUnavailable", err)
	}
	e2 := newEnv(t)
	armed, err := e2.c.SendMessage(e2.ctx, e2.msg("Create a VPC; backup not ready"))
	if err != nil {
		t.Fatal(err)
	}
	sid, _ = armed.IacCode()["iacCodeSessionId"].(string)
	if _, err := e2.c.EnsureRestored(e2.ctx, e2.cwd, sid, armed.TaskID); !errors.Is(err, a2a.ErrBackupNotReady) {
		t.Fatalf("first EnsureRestored: %v, want ErrBackupNotReady", err)
	}
	for _, want := range []string{a2a.RestoreRestored, a2a.RestoreCurrent} {
		if got, err := e2.c.EnsureRestored(e2.ctx, e2.cwd, sid, armed.TaskID); err != nil || got != want {
			t.Fatalf("EnsureRestored = %q, %v; want %s", got, err, want)
		}
	}
}

func TestAgentPermissionReplyAndSubscribe(t *testing.T) {
	e := newEnv(t)
	// SendMessage returns at the INPUT_REQUIRED permission wait.
	task, err := e.c.SendMessage(e.ctx, e.msg("permission please"))
	if err != nil || task.Kind != a2a.KindTask || task.State() != a2a.StateInputRequired {
		t.Fatalf("SendMessage = %+v, %v", task, err)
	}
	input, _ := task.IacCode()["input"].(map[string]any)
	perm, _ := task.IacCode()["permission"].(map[string]any)
	if input["kind"] != "permission" || input["toolUseId"] != "toolu_demo_bash" || input["requestTaskId"] != task.TaskID ||
		!strings.HasPrefix(input["inputId"].(string), "permission-") || perm["pending"] != true || perm["autoApproved"] != false {
		t.Fatalf("input = %#v, permission = %#v", input, perm)
	}
	// Subscribing to a task waiting for input: the initial task, then the
	// stream ends, as it does at any INPUT_REQUIRED (§5.2).
	sub, err := e.c.SubscribeToTask(e.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	evs := drainOK(t, sub)
	if len(evs) != 1 || evs[0].Kind != a2a.KindTask || evs[0].State() != a2a.StateInputRequired || !hasInput(evs[0]) {
		t.Fatalf("subscription while waiting = %d events %+v", len(evs), evs)
	}
	// Malformed replies are rejected before any stream (-32602).
	_, err = e.c.SendMessage(e.ctx, permReply(task.TaskID, task.ContextID, input, "allow"))
	wantRPC(t, err, a2a.CodeInvalidParams, "Permission decision must be allow_once or deny.")
	_, err = e.c.SendStreamingMessage(e.ctx, permReply(task.TaskID, task.ContextID, input, "allow_always"))
	wantRPC(t, err, a2a.CodeInvalidParams, "Permission decision must be allow_once or deny.")
	extra := permReply(task.TaskID, task.ContextID, input, "allow_once")
	extra.Parts[0] = a2asdk.NewDataPart(map[string]any{"schemaVersion": 1, "kind": "permission", "requestTaskId": task.TaskID,
		"inputId": input["inputId"], "toolUseId": input["toolUseId"], "decision": "allow_once", "note": "x"})
	extra.Parts[0].MediaType = "application/json"
	_, err = e.c.SendMessage(e.ctx, extra)
	wantRPC(t, err, a2a.CodeInvalidParams, "Permission response payload fields do not match schemaVersion 1.")
	stale := map[string]any{"inputId": "permission-stale", "toolUseId": "toolu_demo_bash"}
	_, err = e.c.SendMessage(e.ctx, permReply(task.TaskID, task.ContextID, stale, "deny"))
	wantRPC(t, err, a2a.CodeInvalidParams, "permission_resume_invalid: pending permission is not active.")

	// The reply's own stream carries inputReceived, then ends.
	rep := drainOK(t, e.stream(t, permReply(task.TaskID, task.ContextID, input, "allow_once")))
	ir, _ := rep[len(rep)-1].IacCode()["inputReceived"].(map[string]any)
	if len(rep) != 1 || rep[0].State() != a2a.StateWorking || ir["kind"] != "permission" || ir["inputId"] != input["inputId"] ||
		ir["toolUseId"] != "toolu_demo_bash" || ir["decision"] != "allow_once" {
		t.Fatalf("reply stream = %d events, inputReceived %#v", len(rep), ir)
	}
	// The rest of the turn through SubscribeToTask: task frame, live frames.
	sub, err = e.c.SubscribeToTask(e.ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	evs = drainOK(t, sub)
	kinds, states := kindsStates(evs)
	if strings.Join(kinds, " ") != "task statusUpdate statusUpdate statusUpdate statusUpdate statusUpdate" ||
		strings.Join(states, " ") != "working working working working working input-required" {
		t.Fatalf("subscription after the reply: kinds %v states %v", kinds, states)
	}
	if got := evs[2].Status.Message.Text(); got != "The workspace is "+e.cwd+"." {
		t.Fatalf("continuation text = %q", got)
	}
}
