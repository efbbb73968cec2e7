package scaleout

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// newHTTPClient is the clients' transport: a bounded dial, keep-alive
// connections as a real client keeps them (a restarted replica breaks
// them), no overall timeout (a stream lasts as long as its run); every
// request carries its own deadline. headerTimeout, when not zero, gives
// up a replica that sends no answer's headers in time (one that waits on
// an unreachable Redis), so the client tries another.
func newHTTPClient(headerTimeout time.Duration) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   64,
		ResponseHeaderTimeout: headerTimeout,
	}}
}

// send sends one request to one replica and reads its answer to the end,
// recording what the client observed in the history. onEvent sees every
// SSE event as it arrives.
func (f *fleet) send(ctx context.Context, a *attempt, path string, body any, onEvent func(map[string]any)) map[string]any {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.reps[a.replica].url+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", a.reqID)
	a.start = time.Now()
	defer func() { a.end = time.Now(); f.h.add(a) }()
	res, err := f.client.Do(req)
	if err != nil {
		a.transport = err.Error()
		return nil
	}
	defer res.Body.Close()
	a.header, a.status = time.Now(), res.StatusCode
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]any
		_ = json.NewDecoder(res.Body).Decode(&m)
		switch e := m["error"].(type) {
		case map[string]any:
			a.code, _ = e["code"].(string)
		case string: // an observation's refusal (protocol.md §7.2)
			a.code = e
		}
		return m
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if json.Unmarshal([]byte(d), &ev) != nil {
			continue
		}
		switch ev["type"] {
		case "RUN_STARTED":
			a.started = time.Now()
		case "RUN_FINISHED":
			a.finished = time.Now()
			a.terminal = "success"
			if o, ok := ev["outcome"].(map[string]any); ok {
				a.terminal, _ = o["type"].(string)
				its, _ := o["interrupts"].([]any)
				for _, it := range its {
					if m, ok := it.(map[string]any); ok {
						id, _ := m["id"].(string)
						a.interrupts = append(a.interrupts, id)
					}
				}
			}
		case "RUN_ERROR":
			a.finished = time.Now()
			a.terminal = fmt.Sprintf("error:%v", ev["code"])
		default:
			a.lastContent = time.Now()
		}
		if e := executionOf(ev); e != "" {
			a.exec = e
		}
		if onEvent != nil {
			onEvent(ev)
		}
	}
	return nil
}

// refused reports an attempt that no replica served: the replica was
// unreachable (or sent no headers in time), or answered that the
// thread's owner or the state is unavailable (both retryable, 503).
func refused(a *attempt) bool {
	return a.transport != "" || a.status == http.StatusServiceUnavailable &&
		(a.code == "OWNER_UNAVAILABLE" || a.code == "STATE_UNAVAILABLE" ||
			// The same refusals of an observation (protocol.md §7.2).
			a.code == i18n.MsgOwnerUnavailable || a.code == i18n.MsgStateUnavailable)
}

// failedClosed reports a run that ended with an error that leaves its
// thread usable, so the same request may be made again in a new run: a
// durable write or the owner's lease failed, its replica stopped (ADAPTER_SHUTTING_DOWN), the thread was still busy
// with the previous run, or the run id was recorded by an admission
// whose answer was a refusal (its write landed although its answer was
// lost with a connection: DUPLICATE_RUN_ID on the retry, nothing ran).
func failedClosed(a *attempt) bool {
	switch a.terminal {
	case "error:STATE_PERSISTENCE_FAILED", "error:OWNER_UNAVAILABLE", "error:STATE_UNAVAILABLE", "error:A2A_UNAVAILABLE",
		"error:ADAPTER_SHUTTING_DOWN":
		return true
	}
	return a.status == http.StatusConflict && (a.code == "THREAD_BUSY" || a.code == "DUPLICATE_RUN_ID" && a.afterRefusal)
}

// note records what a served attempt tells of the thread's tasks.
func (th *thread) note(a *attempt) {
	switch a.terminal {
	case "error:STATE_PERSISTENCE_FAILED", "error:OWNER_UNAVAILABLE":
		th.mu.Lock()
		th.cancelledTask = true
		th.mu.Unlock()
	}
}

// gone reports an answer that the interrupt's execution is over, which
// is truthful only after a run of the thread cancelled its task.
func (th *thread) gone(a *attempt) bool {
	th.mu.Lock()
	defer th.mu.Unlock()
	return th.cancelledTask && (a.terminal == "error:CANCELLED" || a.terminal == "error:EXECUTION_LOST")
}

// documented are the answers protocol.md documents for runs, cancels and
// observations (§2.6, §2.7, §7.1, §7.2): an attempt of a fault test must
// end with one of them.
var documented = map[string]bool{
	"STATE_UNAVAILABLE": true, "EXECUTION_LOST": true, "DUPLICATE_RUN_ID": true, "RUN_ID_CONFLICT": true, "THREAD_BUSY": true,
	"THREAD_BINDING_CONFLICT": true, "RESUME_REQUIRED": true, "INVALID_INPUT": true, "OWNER_UNAVAILABLE": true,
	"A2A_PROTOCOL_ERROR": true, "A2A_UNAVAILABLE": true, "A2A_EXECUTION_FAILED": true, "CANCELLED": true,
	"RESUME_ALREADY_APPLIED": true, "INCOMPLETE_RESUME": true, "UNKNOWN_INTERRUPT": true, "RESUME_PAYLOAD_INVALID": true,
	"STATE_PERSISTENCE_FAILED": true, "SESSION_BACKUP_NOT_READY": true, "EXECUTION_NOT_FOUND": true,
	"EXECUTION_FAILED": true, "ADAPTER_SHUTTING_DOWN": true,
	"Execution checkpoint unavailable": true, "Execution observation identity changed": true, "AG-UI adapter state unavailable": true,
	i18n.MsgOwnerUnavailable: true, i18n.MsgStateUnavailable: true,
}

// undocumented returns what is not a documented answer in an attempt
// that got one (a transport error is the client's own finding), or "".
func undocumented(a *attempt) string {
	switch {
	case a.transport != "":
		return ""
	case !a.started.IsZero() && a.terminal == "":
		return "a stream without a terminal event"
	case strings.HasPrefix(a.terminal, "error:") && !documented[strings.TrimPrefix(a.terminal, "error:")]:
		return a.terminal
	case a.status >= 500 && !documented[a.code], a.status >= 400 && a.code != "" && !documented[a.code]:
		return fmt.Sprintf("%d %q", a.status, a.code)
	}
	return ""
}

// thread is one client thread: its requests go to a random replica; a
// refused request is sent again, unchanged, to the next replica, and so
// on until one serves it. In strict mode every run must end as its kind
// promises; otherwise a run may fail closed (failedClosed), and the
// client makes the same request again in a new run.
type thread struct {
	f      *fleet
	id     string
	inv    string
	strict bool
	// only, when not empty, are the replicas this thread's requests go to.
	only []int
	seq  int
	reqs atomic.Int64

	mu    sync.Mutex
	worst time.Duration // the longest time a request of this thread was refused
	// cancelledTask is set once a run of the thread failed closed in a
	// way that cancels its A2A task (protocol.md §9.3): an interrupt of
	// it may then be answered CANCELLED or EXECUTION_LOST.
	cancelledTask bool
	// refusals counts refused attempts; problems are unexpected results.
	refusals int
	problems []string
}

func (f *fleet) newThread(id string, strict bool) *thread {
	return &thread{f: f, id: id, inv: "inv-" + id, strict: strict}
}

func (th *thread) problem(format string, args ...any) {
	th.mu.Lock()
	defer th.mu.Unlock()
	if len(th.problems) < 5 {
		th.problems = append(th.problems, fmt.Sprintf(format, args...))
	}
}

// serveTimeout bounds how long a request is retried across replicas, and
// a run made again after failing closed.
const serveTimeout = 30 * time.Second

// serve sends a request until a replica serves it (any answer but a
// refusal) and returns the attempt that was served, or the last refused
// one after serveTimeout. The time from the first refusal to the served
// answer's headers is the thread's unavailability. replicas, when not
// empty, are the only replicas tried.
func (th *thread) serve(ctx context.Context, kind, runID, path string, body any, onEvent func(map[string]any), replicas ...int) (*attempt, map[string]any) {
	if len(replicas) == 0 {
		replicas = th.only
	}
	if len(replicas) == 0 {
		for i := range th.f.reps {
			replicas = append(replicas, i)
		}
	}
	n := len(replicas)
	first := rand.IntN(n)
	var since time.Time
	deadline := time.Now().Add(serveTimeout)
	for i := 0; ; i++ {
		a := &attempt{thread: th.id, kind: kind, runID: runID, replica: replicas[(first+i)%n],
			reqID: fmt.Sprintf("%s.%d", th.id, th.reqs.Add(1))}
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		m := th.f.send(rctx, a, path, body, onEvent)
		cancel()
		if !th.strict {
			if u := undocumented(a); u != "" {
				th.problem("%s %s on %d: undocumented answer %s", kind, runID, a.replica, u)
			}
		}
		if !refused(a) {
			a.afterRefusal = !since.IsZero()
			th.note(a)
			if !since.IsZero() {
				th.mu.Lock()
				th.worst = max(th.worst, a.header.Sub(since))
				th.mu.Unlock()
			}
			return a, m
		}
		th.mu.Lock()
		th.refusals++
		th.mu.Unlock()
		if since.IsZero() {
			since = a.start
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			th.mu.Lock()
			th.worst = max(th.worst, time.Since(since))
			th.mu.Unlock()
			return a, m
		}
		if i%n == n-1 {
			// Every replica refused: pace the next round.
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func (th *thread) runID(kind string) string {
	th.seq++
	return fmt.Sprintf("%s-%d", kind, th.seq)
}

// input is a RunAgentInput of this thread; text "" sends no message.
func (th *thread) input(runID, text string, resume []any) map[string]any {
	msgs := []any{}
	if text != "" {
		msgs = append(msgs, map[string]any{"id": "m-" + runID, "role": "user", "content": text})
	}
	b := map[string]any{
		"threadId": th.id, "runId": runID, "state": map[string]any{}, "messages": msgs, "tools": []any{}, "context": []any{},
		"forwardedProps": map[string]any{"iacCode": map[string]any{"schemaVersion": 1, "rosInvocationId": th.inv, "cwd": th.f.cwd}},
	}
	if resume != nil {
		b["resume"] = resume
	}
	return b
}

func allow(ids ...string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}
	}
	return out
}

// executionOf returns the execution id of a session event, or "".
func executionOf(ev map[string]any) string {
	if ev["name"] != "iac-code.session.v1" {
		return ""
	}
	v, _ := ev["value"].(map[string]any)
	s, _ := v["executionId"].(string)
	return s
}

// pendingOf returns the interrupt ids a RESUME_REQUIRED answer lists.
func pendingOf(m map[string]any) []string {
	e, _ := m["error"].(map[string]any)
	its, _ := e["pendingInterrupts"].([]any)
	var ids []string
	for _, it := range its {
		if m, ok := it.(map[string]any); ok {
			if id, _ := m["id"].(string); id != "" {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// turn runs a turn with text (a normal turn, or "slow") until it ends as
// it should; a run that failed closed is made again, and interrupts the
// thread waits on that this client never saw (RESUME_REQUIRED, after a
// run that failed once its interrupt was stored) are answered first.
func (th *thread) turn(ctx context.Context, text string) {
	deadline := time.Now().Add(serveTimeout)
	for {
		run := th.runID("turn")
		a, m := th.serve(ctx, "turn", run, "", th.input(run, text, nil), nil)
		switch {
		case a.terminal == "success":
			return
		case a.status == http.StatusConflict && a.code == "RESUME_REQUIRED" && !th.strict && time.Now().Before(deadline):
			// Interrupts stored by a run that then failed closed: they
			// count as seen, and the checker wants each answered once
			// (or truthfully gone).
			a.interrupts = pendingOf(m)
			if !th.resume(ctx, a.interrupts, a.replica) {
				return
			}
		case !th.strict && failedClosed(a) && time.Now().Before(deadline):
		default:
			th.problem("turn %s on %d: %s", run, a.replica, a.result())
			return
		}
	}
}

// resume answers interrupts (allow) in a new run until one succeeds or
// the answer turns out applied already; a run that failed closed is made
// again. It reports whether the interrupts were answered.
func (th *thread) resume(ctx context.Context, ids []string, raisedOn int) bool {
	deadline := time.Now().Add(serveTimeout)
	for {
		run := th.runID("resume")
		r, _ := th.serve(ctx, "resume", run, "", th.input(run, "", allow(ids...)), nil)
		r.answers = ids
		switch {
		case r.terminal == "success":
			return true
		case r.terminal == "error:RESUME_ALREADY_APPLIED" && !th.strict:
			// An earlier resume was applied though its client did not
			// see it succeed (it failed closed after A2A took it).
			return true
		case !th.strict && th.gone(r):
			// A run of the thread failed closed and cancelled the task
			// (protocol.md §9.3), an earlier resume of this one after A2A
			// had taken the answer (§5.9) included: the checker wants
			// the answer upstream, or this answer.
			return true
		case !th.strict && failedClosed(r) && time.Now().Before(deadline):
		default:
			th.problem("resume %s of %v (raised on %d) on %d: %s", run, ids, raisedOn, r.replica, r.result())
			return false
		}
	}
}

// permission raises a permission (again after a run that failed
// closed), observes the interrupted execution when observe is set, and
// resumes it.
func (th *thread) permission(ctx context.Context, observe bool) {
	deadline := time.Now().Add(serveTimeout)
	for {
		run := th.runID("perm")
		a, m := th.serve(ctx, "permission", run, "", th.input(run, "Deploy the stack (permission)", nil), nil)
		if !th.strict && failedClosed(a) && time.Now().Before(deadline) {
			continue
		}
		if !th.strict && a.status == http.StatusConflict && a.code == "RESUME_REQUIRED" && time.Now().Before(deadline) {
			a.interrupts = pendingOf(m)
			if !th.resume(ctx, a.interrupts, a.replica) {
				return
			}
			continue
		}
		if a.terminal != "interrupt" || len(a.interrupts) != 1 {
			th.problem("permission %s on %d: %s %v", run, a.replica, a.result(), a.interrupts)
			return
		}
		if observe && a.exec != "" {
			o, _ := th.serve(ctx, "observe", run, "extensions/iac-code/v1/executions/"+a.exec+"/subscribe",
				map[string]any{"threadId": th.id, "runId": run, "rosInvocationId": th.inv}, nil)
			if o.terminal != "interrupt" && (th.strict || o.status == http.StatusOK) {
				th.problem("observation of %s on %d: %s", run, o.replica, o.result())
			}
		}
		th.resume(ctx, a.interrupts, a.replica)
		return
	}
}

// cancel starts a run that lasts until cancelled; once its session event
// arrives an observer may subscribe to it, and the cancel is sent, each
// through a random replica.
func (th *thread) cancel(ctx context.Context) {
	run := th.runID("cancel")
	var wg sync.WaitGroup
	var once sync.Once
	var ended atomic.Bool
	defer wg.Wait()
	a, _ := th.serve(ctx, "cancel-run", run, "", th.input(run, "cancel me", nil), func(ev map[string]any) {
		exec := executionOf(ev)
		if exec == "" {
			return
		}
		once.Do(func() {
			base := "extensions/iac-code/v1/executions/" + exec
			if rand.IntN(2) == 0 {
				wg.Go(func() {
					th.serve(ctx, "observe", run, base+"/subscribe", map[string]any{"threadId": th.id, "runId": run, "rosInvocationId": th.inv}, nil)
				})
			}
			wg.Go(func() {
				// Outside strict mode a cancel that failed (closed) is sent
				// again while the run lasts.
				for deadline := time.Now().Add(serveTimeout); ; {
					c, m := th.serve(ctx, "cancel", run, base+"/cancel", map[string]any{"threadId": th.id, "rosInvocationId": th.inv}, nil)
					st, _ := m["status"].(string)
					if c.status == 200 && (st == "cancelled" || st == "already_terminal") {
						return
					}
					if th.strict || c.status == 200 || time.Now().After(deadline) {
						th.problem("cancel of %s on %d: %s %v", run, c.replica, c.result(), m)
						return
					}
					if ended.Load() || c.code == "EXECUTION_NOT_FOUND" {
						// A documented failure (STATE_PERSISTENCE_FAILED
						// after CancelTask) while the run ended anyway:
						// its own outcome is checked below.
						return
					}
				}
			})
		})
	})
	ended.Store(true)
	if a.terminal != "error:CANCELLED" && (th.strict || a.terminal == "success" || a.terminal == "interrupt") {
		th.problem("cancelled run %s on %d: %s", run, a.replica, a.result())
	}
}
