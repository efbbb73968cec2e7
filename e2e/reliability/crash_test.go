package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent/demoagenttest"
	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// crashBinary is the server built with -tags crashhook (the state store's
// test-only hook that SIGKILLs the process at a chosen write,
// internal/state/filestore/crashhook.go); built on first use.
var (
	crashOnce   sync.Once
	crashBinary string
	crashErr    error
)

func crashBin(t *testing.T) string {
	t.Helper()
	crashOnce.Do(func() {
		crashBinary = filepath.Join(filepath.Dir(binary), "iac-code-agui-crashhook")
		out, err := exec.Command("go", "build", "-tags", "crashhook", "-o", crashBinary, "../../cmd/iac-code-agui").CombinedOutput()
		if err != nil {
			crashErr = fmt.Errorf("build -tags crashhook: %v\n%s", err, out)
		}
	})
	if crashErr != nil {
		t.Fatal(crashErr)
	}
	return crashBinary
}

// cycleKinds are the interrupts a crash cycle goes through: a normal-mode
// permission answered by a streamed data part, a pipeline question
// answered by text, and a candidate-scope permission answered sideband
// (SendMessage).
var cycleKinds = []string{"permission", "question", "candidate permission"}

// cycle is one client's run → interrupt → resume → continuation on its
// own thread, driven across server kills. It remembers the interrupts the
// client saw, as a real client would.
type cycle struct {
	thread, kind, cwd string
	stage             int // 0 new turn, 1 resume, 2 continuation, 3 done
	seen              []map[string]any
	runs              int
	// untracked: a kill left an execution whose task id was never stored
	// (its open task is found by context and cancelled, orphan.go).
	untracked bool
	outcomes  []string // every answer, for the failure message
}

func (c *cycle) runID() string {
	c.runs++
	return fmt.Sprintf("run-%d", c.runs)
}

// answers answers every interrupt the client saw.
func (c *cycle) answers() []any {
	var out []any
	for _, it := range c.seen {
		md, _ := it["metadata"].(map[string]any)
		payload := map[string]any{"decision": "allow_once"}
		if md["kind"] != "permission" {
			opts, _ := md["standardOptions"].([]any)
			if len(opts) == 0 {
				payload = map[string]any{"freeText": "yes"}
			} else {
				payload = map[string]any{"selectedId": opts[0].(map[string]any)["id"]}
			}
		}
		out = append(out, map[string]any{"interruptId": it["id"], "status": "resolved", "payload": payload})
	}
	return out
}

// stepResult says whether the server survived a step.
type stepResult int

const (
	stepOK stepResult = iota
	stepDied
)

// step sends the request of the current stage. A request that fails, or
// an answer without a terminal event, must be the server's death (it is
// waited for); anything else that is not a documented outcome fails the
// test.
func (c *cycle) step(t *testing.T, s *server) stepResult {
	t.Helper()
	var body map[string]any
	switch c.stage {
	case 0:
		body = input(c.thread, c.runID(), c.kind+" please", c.cwd, nil)
	case 1:
		body = input(c.thread, c.runID(), "", c.cwd, c.answers())
	case 2:
		body = input(c.thread, c.runID(), "hello again", c.cwd, nil)
	}
	raw, _ := json.Marshal(body)
	res, err := client.Post(s.URL, "application/json", strings.NewReader(string(raw)))
	var status int
	var all []byte
	if err == nil {
		status = res.StatusCode
		all, err = readAll(res)
	}
	evs := e2etest.Events(all)
	out := outcome(evs)
	c.outcomes = append(c.outcomes, fmt.Sprintf("stage %d: %d %s", c.stage, status, out))
	if err != nil || (status == 200 && out == "") {
		select {
		case <-s.done:
			return stepDied
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: stage %d ended without a terminal event while the server runs: %v %.500s", c.thread, c.stage, err, all)
		}
	}
	if status != 200 {
		code := errorCode(string(all))
		switch {
		case status == 409 && code == "RESUME_REQUIRED":
			// The server committed interrupts the client never saw (it
			// died before announcing them): the answer lists them.
			var e struct {
				Error struct {
					Pending []map[string]any `json:"pendingInterrupts"`
				} `json:"error"`
			}
			_ = json.Unmarshal(all, &e)
			if len(e.Error.Pending) == 0 {
				t.Fatalf("%s: RESUME_REQUIRED without pendingInterrupts: %s", c.thread, all)
			}
			c.seen, c.stage = e.Error.Pending, 1
			return stepOK
		default:
			t.Fatalf("%s: stage %d refused: %d %s (history %v)", c.thread, c.stage, status, all, c.outcomes)
		}
	}
	switch {
	case out == "interrupt":
		c.seen = nil
		for _, it := range last(evs)["outcome"].(map[string]any)["interrupts"].([]any) {
			c.seen = append(c.seen, it.(map[string]any))
		}
		c.stage = 1
	case out == "success" && c.stage < 2:
		c.stage = 2
	case out == "success":
		c.stage = 3
	case c.stage == 1 && (out == "error:EXECUTION_LOST" || out == "error:RESUME_ALREADY_APPLIED"):
		// Cleanly reported: the execution died with a kill, or the
		// answer was committed before it.
		c.stage = 2
	default:
		t.Fatalf("%s (%s): stage %d ended %q (history %v)\n%.3000s", c.thread, c.kind, c.stage, out, c.outcomes, all)
	}
	return stepOK
}

func readAll(res *http.Response) ([]byte, error) {
	defer res.Body.Close()
	return io.ReadAll(res.Body)
}

// crashRun is one crash-consistency run: a state directory, an optional
// external agent that survives every kill (nil: the embedded agent, which
// dies with the binary), and the counts.
type crashRun struct {
	t              *testing.T
	bin            string
	agent          *demoagenttest.Server
	stateDir, root string
	kills          int
	cycles         []*cycle
	tempsRemoved   int
	outcomes       map[string]int // outcome of the first request after a kill
	// beforeRestart, when set, runs after a kill and before the restart:
	// another program's turn on the state directory.
	beforeRestart func(c *cycle)
	// afterStart, when set, runs once the restarted server has started
	// and swept its temporary files, before any request.
	afterStart func(c *cycle)
}

func newCrashRun(t *testing.T, bin string, agent *demoagenttest.Server) *crashRun {
	return &crashRun{t: t, bin: bin, agent: agent, stateDir: t.TempDir(), root: t.TempDir(), outcomes: map[string]int{}}
}

func (r *crashRun) opts(env ...string) serverOpts {
	o := serverOpts{stateDir: r.stateDir, root: r.root, bin: r.bin, env: env}
	if r.agent != nil {
		o.agentURL = r.agent.URL
	}
	return o
}

func (r *crashRun) newCycle(kind string) *cycle {
	c := &cycle{thread: fmt.Sprintf("t-crash-%d", len(r.cycles)), kind: kind, cwd: filepath.Join(r.root, "ws")}
	r.cycles = append(r.cycles, c)
	return c
}

// round drives c on a server started with env until the cycle ends or
// the server dies (killed by its crash hook, or by this test after
// randomKill when that is > 0). It reports whether a kill interrupted the
// cycle, and after one checks the invariants on a restarted server.
func (r *crashRun) round(c *cycle, randomKill time.Duration, env ...string) bool {
	t := r.t
	t.Helper()
	s := startServer(t, r.opts(env...))
	if randomKill > 0 {
		timer := time.AfterFunc(randomKill, func() { _ = s.cmd.Process.Kill() })
		defer timer.Stop()
	}
	for c.stage < 3 {
		if c.step(t, s) == stepDied {
			if randomKill == 0 && !strings.Contains(s.out.String(), "crashhook: SIGKILL") {
				t.Fatalf("%s: the server died without being killed:\n%s", c.thread, tail(s.out.String(), 3000))
			}
			r.kills++
			r.afterKill(c)
			return true
		}
	}
	s.kill()
	return false
}

// afterKill restarts the server on the same state and checks every
// invariant of docs/reliability.md (crash consistency), then drives the
// interrupted cycle to its end.
func (r *crashRun) afterKill(c *cycle) {
	t := r.t
	t.Helper()
	threads := filepath.Join(r.stateDir, "threads")
	// Leftover temporary files are removed at the next start once older
	// than filestore.StaleTempAge; age them as the time a restart takes would.
	temps := tempFiles(t, threads)
	old := time.Now().Add(-time.Minute)
	for _, p := range temps {
		_ = os.Chtimes(p, old, old)
	}
	// Every interrupt the client saw is stored: pending, or its answer
	// committed (the kill came during the resume).
	if c.stage == 1 {
		key, _ := state.FileKey(c.thread)
		data, err := os.ReadFile(filepath.Join(threads, key+".json"))
		if err != nil {
			t.Fatalf("%s: the client saw interrupts, but the thread file is gone: %v", c.thread, err)
		}
		doc, err := state.Decode(data, c.thread)
		if err != nil {
			t.Fatalf("%s: the thread file does not load after a kill: %v", c.thread, err)
		}
		for _, it := range c.seen {
			id, _ := it["id"].(string)
			_, pending := doc.Execution.Pending[id]
			applied := slices.ContainsFunc(doc.AppliedResumeDigests, func(a state.AppliedDigest) bool { return a.InterruptID == id })
			if !pending && !applied {
				t.Fatalf("%s: the client saw interrupt %s, which is neither pending nor answered after the kill", c.thread, id)
			}
		}
	}
	if r.beforeRestart != nil {
		r.beforeRestart(c)
	}
	// A new turn (stage 0, or stage 2 after the resume) killed between
	// its send and the write of its task id.
	if key, _ := state.FileKey(c.thread); c.stage == 0 || c.stage == 2 {
		if data, err := os.ReadFile(filepath.Join(threads, key+".json")); err == nil {
			if doc, err := state.Decode(data, c.thread); err == nil && doc.Execution.TaskID == nil && !slices.Contains(doc.TerminalExecutionIDs, doc.Execution.ExecutionID) {
				c.untracked = true
			}
		}
	}
	s := startServer(t, r.opts())
	defer s.kill()
	// The start-up sweep runs in the background (docs/benchmarks.md).
	left := tempFiles(t, threads)
	for deadline := time.Now().Add(5 * time.Second); len(left) != 0 && time.Now().Before(deadline); left = tempFiles(t, threads) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(left) != 0 {
		t.Fatalf("temporary files left after the restart: %v", left)
	}
	r.tempsRemoved += len(temps)
	if r.afterStart != nil {
		r.afterStart(c)
	}
	// No state file is torn: every document loads.
	for _, cc := range r.cycles {
		key, _ := state.FileKey(cc.thread)
		data, err := os.ReadFile(filepath.Join(threads, key+".json"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := state.Decode(data, cc.thread); err != nil {
			t.Fatalf("%s: the thread file does not load after a kill: %v", cc.thread, err)
		}
	}
	// Every interrupt the client saw is resumable or cleanly reported,
	// the thread is not left busy, and it takes a new turn.
	first := len(c.outcomes)
	for i := 0; c.stage < 3; i++ {
		if i == 8 {
			t.Fatalf("%s: no end after a kill: %v", c.thread, c.outcomes)
		}
		if c.step(t, s) == stepDied {
			t.Fatalf("%s: the restarted server died: %v\n%s", c.thread, c.outcomes, tail(s.out.String(), 3000))
		}
	}
	r.outcomes[c.outcomes[first]]++
}

// tempFiles lists the store's temporary files in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), ".tmp") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// answersSentTwice counts, at the agent, the answers (messages with an
// agui-resume- id) per interrupt and returns those sent more than once.
func answersSentTwice(a *demoagenttest.Server) []string {
	n := map[string]int{}
	for _, call := range a.Calls() {
		if !strings.HasPrefix(call.MessageID, "agui-resume-") {
			continue
		}
		key := call.ContextID + " text answer to " + call.TaskID
		for _, p := range call.Parts {
			var d struct {
				InputID string `json:"inputId"`
			}
			if len(p.Data) > 0 && json.Unmarshal(p.Data, &d) == nil && d.InputID != "" {
				key = call.ContextID + " " + d.InputID
			}
		}
		n[key]++
	}
	var twice []string
	for k, v := range n {
		if v > 1 {
			twice = append(twice, fmt.Sprintf("%s ×%d", k, v))
		}
	}
	return twice
}

// crashPoints are the points of a state write the crash hook stops at
// (internal/state/filestore/crashhook.go), alone (SIGKILL: the page cache
// survives) and with a power loss (what was not synced yet is dropped
// first) where the two differ.
var crashPoints = []string{"before", "written", "written:powerloss", "synced", "renamed", "renamed:powerloss", "dirsynced"}

// TestCrashConsistency kills the real binary with SIGKILL at each state
// write of the run → interrupt → resume → continuation cycle (through
// the crashhook build), at every point of the write and with a simulated
// power loss, and at random moments, with an external agent that
// survives the kills and counts the answers; then the same at random
// moments with the embedded agent, which dies with the binary. After
// every kill a restarted server must load every thread file, have removed
// the temporary files, resume or cleanly report every interrupt the
// client saw, and take a new turn (never THREAD_BUSY); no answer reaches
// the agent twice.
func TestCrashConsistency(t *testing.T) {
	bin := crashBin(t)
	target, phases := 30, crashPoints // target: kills
	if e2etest.Long() {
		target = 200
	}
	agent := startAgent(t, demoagent.Options{StepDelay: time.Millisecond})
	ext := newCrashRun(t, bin, agent)
	// Every write of every kind of cycle, one phase each in CI (rotating),
	// every phase in the long mode.
	writes := map[string]int{}
	for _, kind := range cycleKinds {
		for n := 1; ; n++ {
			fired := false
			for i, phase := range phases {
				if !e2etest.Long() && i != n%len(phases) {
					continue
				}
				if ext.round(ext.newCycle(kind), 0, fmt.Sprintf("IAC_CODE_AGUI_CRASH_AT=%d:%s", n, phase)) {
					fired = true
				}
			}
			if !fired {
				writes[kind] = n - 1
				break
			}
		}
	}
	atWrites := ext.kills
	// Random moments: within the time a whole cycle takes; a third of
	// them with the embedded agent. At least 9, and the total at least
	// the target.
	start := time.Now()
	ext.round(ext.newCycle("permission"), 0)
	span := time.Since(start)
	embedded := newCrashRun(t, binary, nil)
	for i := 0; ext.kills+embedded.kills < max(target, atWrites+9); i++ {
		delay := time.Duration(1 + rand.Int64N(int64(span)))
		if i%3 == 2 {
			embedded.round(embedded.newCycle(cycleKinds[i%len(cycleKinds)]), delay)
		} else {
			ext.round(ext.newCycle(cycleKinds[i%len(cycleKinds)]), delay)
		}
	}
	untracked := 0
	for _, c := range ext.cycles {
		if c.untracked {
			untracked++
		}
	}
	if twice := answersSentTwice(agent); len(twice) != 0 {
		t.Fatalf("answers sent to A2A more than once: %v", twice)
	}
	t.Logf("state writes per cycle %v; %d kills at a state write, %d at random moments with the external agent, %d with the embedded agent (cycle %v); %d temporary files removed at restart; first answers after a kill: %v %v; threads killed before their task id was stored, then taking their next turn: %d",
		writes, atWrites, ext.kills-atWrites, embedded.kills, span.Round(time.Millisecond), ext.tempsRemoved+embedded.tempsRemoved, ext.outcomes, embedded.outcomes, untracked)
}

// TestForeignWriteAfterCrashKept: after a kill at a state write (every
// point, with and without a power loss), another program (the original
// adapter, an operator's tool) writes the thread file before the next
// start. The start must not touch it, and the thread goes on from it:
// its run is still recorded when the cycle ends.
func TestForeignWriteAfterCrashKept(t *testing.T) {
	bin := crashBin(t)
	agent := startAgent(t, demoagent.Options{StepDelay: time.Millisecond})
	r := newCrashRun(t, bin, agent)
	threads := filepath.Join(r.stateDir, "threads")
	foreign := map[string][]byte{}
	r.beforeRestart = func(c *cycle) {
		key, _ := state.FileKey(c.thread)
		path := filepath.Join(threads, key+".json")
		doc := state.NewThread(c.thread, c.cwd, nil, "exec-foreign", "inv-foreign")
		if data, err := os.ReadFile(path); err == nil {
			if doc, err = state.Decode(data, c.thread); err != nil {
				t.Fatalf("%s: the thread file does not load after a kill: %v", c.thread, err)
			}
		}
		doc.RecordRun("foreign-run", strings.Repeat("f", 64))
		data, err := state.Encode(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(threads, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		foreign[c.thread] = data
	}
	r.afterStart = func(c *cycle) {
		key, _ := state.FileKey(c.thread)
		if data, err := os.ReadFile(filepath.Join(threads, key+".json")); err != nil || !bytes.Equal(data, foreign[c.thread]) {
			t.Fatalf("%s: the start changed the file another program wrote: %v\n%s", c.thread, err, data)
		}
		if entries, _ := os.ReadDir(r.stateDir); len(entries) != 1 || entries[0].Name() != "threads" {
			t.Fatalf("the state directory holds %v, want only threads", entries)
		}
	}
	kills := 0
	for i, point := range crashPoints {
		c := r.newCycle(cycleKinds[i%len(cycleKinds)])
		// The second or third write: the thread file exists, so the
		// other program changes a document of ours.
		if !r.round(c, 0, fmt.Sprintf("IAC_CODE_AGUI_CRASH_AT=%d:%s", 2+i%2, point)) {
			t.Fatalf("%s: the crash hook did not fire at write %d (%s)", c.thread, 2+i%2, point)
		}
		kills++
		key, _ := state.FileKey(c.thread)
		data, err := os.ReadFile(filepath.Join(threads, key+".json"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := state.Decode(data, c.thread)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := doc.RunDigests["foreign-run"]; !ok {
			t.Fatalf("%s (%s): the other program's run was overwritten:\n%s", c.thread, point, data)
		}
	}
	if len(foreign) != kills {
		t.Fatalf("%d foreign writes for %d kills", len(foreign), kills)
	}
}
