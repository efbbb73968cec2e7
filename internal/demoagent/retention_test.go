package demoagent

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestRetentionBound runs 20,000 normal turns over loopback HTTP (four
// clients, three turns per context) with small limits, and checks that
// what the agent holds stays within them while two tasks parked on an
// input survive every sweep and can still be answered.
func TestRetentionBound(t *testing.T) {
	const maxTasks, maxCtxs = 200, 500
	h := newHarness(t, Options{MaxIdleTasks: maxTasks, MaxIdleContexts: maxCtxs})
	q := h.stream("SendStreamingMessage", msgParams("ask me a question", "ctx-wait-q", "", cwdMeta("/w"))).all()
	qid := taskIDOf(q)
	rid, in := startResource(t, h, "ctx-wait-r")
	if stateOf(q[len(q)-1]) != stateInputRequired {
		t.Fatal("the question did not end on INPUT_REQUIRED")
	}

	const clients, turns = 4, 20000
	var wg sync.WaitGroup
	var mu sync.Mutex
	var peakTasks, peakCtxs int
	errs := make(chan error, clients)
	for g := range clients {
		wg.Go(func() {
			d := &turnDriver{url: h.srv.URL, token: testToken, client: &http.Client{}, ctxOf: func(n int) string {
				return "mem-" + strconv.Itoa(g) + "-" + strconv.Itoa(n/3)
			}}
			for i := range turns / clients {
				if err := d.post(); err != nil {
					errs <- err
					return
				}
				if i%250 == 0 {
					tasks, ctxs, _, _ := h.srv.Agent.retained()
					mu.Lock()
					peakTasks, peakCtxs = max(peakTasks, tasks), max(peakCtxs, ctxs)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Idle tasks and contexts at their caps; the two waiting tasks kept,
	// and with them their contexts.
	tasks, ctxs, idleTasks, idleCtxs := h.srv.Agent.retained()
	if tasks != maxTasks+2 || idleTasks != maxTasks || idleCtxs != maxCtxs || ctxs > maxCtxs+maxTasks+2 {
		t.Fatalf("after %d turns: %d tasks (%d idle), %d contexts (%d idle)", turns, tasks, idleTasks, ctxs, idleCtxs)
	}
	// During the run, at most one more running turn per client.
	if peakTasks > maxTasks+2+clients || peakCtxs > maxCtxs+maxTasks+2+clients {
		t.Fatalf("peak during the run: %d tasks, %d contexts", peakTasks, peakCtxs)
	}
	// The parked inputs are intact and still answerable.
	ans := h.stream("SendStreamingMessage", msgParams("2", "ctx-wait-q", "", cwdMeta("/w"))).all()
	if taskIDOf(ans) != qid || stateOf(ans[len(ans)-1]) != stateCompleted {
		t.Fatalf("answer to the parked question: %s", ans[len(ans)-1].raw)
	}
	sel := selectionText(selected(rid, "ctx-wait-r", in["inputId"].(string)))
	ans = h.stream("SendStreamingMessage", msgParams(sel, "ctx-wait-r", rid, cwdMeta("/w"))).all()
	if taskIDOf(ans) != rid || stateOf(ans[len(ans)-1]) != stateInputRequired || iacOf(ans[0])["inputReceived"] == nil {
		t.Fatalf("answer to the parked resource selection: %s", ans[0].raw)
	}
}

// TestRetentionWindow: idle tasks go after TaskRetention, contexts left
// without tasks after ContextRetention; a context that comes back keeps
// its iac-code session id.
func TestRetentionWindow(t *testing.T) {
	h := newHarness(t, Options{})
	a := h.srv.Agent
	first := h.stream("SendStreamingMessage", msgParams("Create a VPC", "ctx-w", "", cwdMeta("/w"))).all()
	tid := taskIDOf(first)
	sid := iacOf(first[len(first)-1])["iacCodeSessionId"]
	q := h.stream("SendStreamingMessage", msgParams("ask me a question", "ctx-wq", "", cwdMeta("/w"))).all()
	qid := taskIDOf(q)
	if tasks, ctxs, idle, _ := a.retained(); tasks != 2 || ctxs != 2 || idle != 1 {
		t.Fatalf("retained %d tasks (%d idle), %d contexts", tasks, idle, ctxs)
	}
	later := time.Now().Add(DefaultTaskRetention + time.Minute)
	a.mu.Lock()
	a.sweepLocked(later)
	a.mu.Unlock()
	if tasks, ctxs, _, idleCtxs := a.retained(); tasks != 1 || ctxs != 2 || idleCtxs != 1 {
		t.Fatalf("after the task window: %d tasks, %d contexts (%d idle)", tasks, ctxs, idleCtxs)
	}
	if c, _ := errorOf(t, h.call("GetTask", map[string]any{"id": tid})); c != -32001 {
		t.Fatalf("evicted task: %v", c)
	}
	if st, _ := h.get("/iac-code/pipeline/state?taskId=" + qid); st != http.StatusOK {
		t.Fatalf("pipeline state of the waiting task: %d", st)
	}
	a.mu.Lock()
	a.sweepLocked(later.Add(DefaultContextRetention + time.Minute))
	a.mu.Unlock()
	if tasks, ctxs, _, _ := a.retained(); tasks != 1 || ctxs != 1 {
		t.Fatalf("after the context window: %d tasks, %d contexts", tasks, ctxs)
	}
	again := h.stream("SendStreamingMessage", msgParams("Create a VPC", "ctx-w", "", cwdMeta("/w"))).all()
	if got := iacOf(again[len(again)-1])["iacCodeSessionId"]; got != sid || sid == nil {
		t.Fatalf("session after eviction %v, before %v", got, sid)
	}
}

// TestIdleCompaction: an idle task keeps its newest idleHistory entries.
func TestIdleCompaction(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("flood 3000", "ctx-f", "", cwdMeta("/w"))).all()
	tid := taskIDOf(evs)
	task := h.call("GetTask", map[string]any{"id": tid})["result"].(map[string]any)
	if n := len(task["history"].([]any)); n != idleHistory {
		t.Fatalf("history of an idle flood task: %d entries", n)
	}
}
