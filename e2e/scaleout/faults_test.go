package scaleout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
)

// docWatch polls the stored revision and fencing counter of threads
// until stopped and records every regression: a document never goes
// back to an older revision, never disappears, and its fencing counter
// never decreases.
type docWatch struct {
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	mu       sync.Mutex
	problems []string
	samples  int
}

func (f *fleet) watchDocs(threads func() []string) *docWatch {
	w := &docWatch{stop: make(chan struct{}), done: make(chan struct{})}
	f.t.Cleanup(func() { w.end() })
	last := map[string]docState{}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, id := range threads() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				s, err := f.docState(ctx, id)
				cancel()
				if err != nil {
					continue
				}
				p := last[id]
				w.mu.Lock()
				w.samples++
				if s.rev < p.rev || s.fence < p.fence {
					w.problems = append(w.problems, fmt.Sprintf("%s regressed: revision %d → %d, fence %d → %d", id, p.rev, s.rev, p.fence, s.fence))
				}
				w.mu.Unlock()
				last[id] = s
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// end stops the watch and returns its findings.
func (w *docWatch) end() []string {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.problems
}

// truthful checks what the clients were told against the stored
// documents: a run that ended in success has its execution terminal in
// its thread's document, and each thread's revision history is a
// gap-free chain (no write was lost or applied over a stale revision).
func (f *fleet) truthful(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	store := redisstore.New(f.rc, f.prefix)
	f.h.mu.Lock()
	byThread := map[string][]*attempt{}
	for _, a := range f.h.attempts {
		byThread[a.thread] = append(byThread[a.thread], a)
	}
	f.h.mu.Unlock()
	var out []string
	for thread, as := range byThread {
		doc, _, err := store.Load(ctx, thread)
		if err != nil {
			continue // a thread no run was admitted of
		}
		for _, a := range as {
			if a.terminal == "success" && a.exec != "" && a.kind != "observe" && !slices.Contains(doc.TerminalExecutionIDs, a.exec) {
				out = append(out, fmt.Sprintf("%s: %s %s ended in success on %d, but its execution %s is not terminal in the stored document", thread, a.kind, a.runID, a.replica, a.exec))
			}
		}
		h, err := store.History(ctx, thread)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: history: %v", thread, err))
			continue
		}
		for i := 1; i < len(h); i++ {
			if h[i][0] != h[i-1][1] {
				out = append(out, fmt.Sprintf("%s: revision %s was saved over %s, not over %s", thread, h[i][1], h[i][0], h[i-1][1]))
			}
		}
	}
	return out
}

// ownerOf returns the replica whose lease the thread has, or -1.
func (f *fleet) ownerOf(threadID string) int {
	owner, _ := f.keys(threadID)
	v, err := f.rc.Get(context.Background(), owner).Result()
	if err != nil {
		return -1
	}
	for _, r := range f.reps {
		if strings.Contains(v, " "+r.url+" ") {
			return r.i
		}
	}
	return -1
}

// finish ends a fault test's load, gives each of its threads and of
// others a last turn (which must succeed now that the faults are gone)
// and checks the whole history.
func (f *fleet) finish(t *testing.T, ctx context.Context, l *load, w *docWatch, others ...*thread) {
	t.Helper()
	l.end()
	all := &load{threads: append(slices.Clone(l.threads), others...)}
	var wg sync.WaitGroup
	for _, th := range all.threads {
		wg.Go(func() { th.turn(ctx, "hello") })
	}
	wg.Wait()
	t.Logf("outcomes: %s", formatCounts(f.h.outcomes()))
	if ps := all.problems(); len(ps) > 0 {
		t.Errorf("%d unexpected results, e.g.:\n%s", len(ps), strings.Join(ps[:min(len(ps), 20)], "\n"))
	}
	if ps := f.truthful(t); len(ps) > 0 {
		t.Errorf("untruthful answers:\n%s", strings.Join(ps[:min(len(ps), 20)], "\n"))
	}
	if w != nil {
		if ps := w.end(); len(ps) > 0 {
			t.Errorf("stored documents regressed:\n%s", strings.Join(ps[:min(len(ps), 20)], "\n"))
		}
	}
	if v := f.h.check(); len(v.problems) > 0 {
		t.Errorf("history:\n%s", strings.Join(v.problems, "\n"))
	}
	for _, r := range f.reps {
		if strings.Contains(r.out.String(), "panic:") {
			t.Errorf("replica %d panicked", r.i)
		}
	}
}

// threadIDs lists a load's thread ids.
func (l *load) threadIDs() []string {
	out := make([]string, len(l.threads))
	for i, th := range l.threads {
		out[i] = th.id
	}
	return out
}

// faultMix is the fault tests' load: turns, slow turns (4 s, so runs are
// in flight across a fault), permissions with and without an observer,
// and cancels.
var faultMix = []string{"turn", "slow", "observed permission", "cancel", "permission"}

// TestRedisLatency adds latency between the replicas and Redis while a
// mixed load runs: first 100 ms (±50) on every replica's link, then 2.5 s
// on each request from one replica, longer than its 2 s lease, for 1.5×
// the lease TTL. Every run succeeds or fails closed with a documented
// code, and what the clients were told is what the store holds: each run
// that succeeded is terminal in its document, no interrupt is lost or
// answered twice, no revision is lost or regresses, no two replicas
// stream a thread at once; every thread takes a new turn afterwards.
//
// CI: 30 threads; IAC_CODE_AGUI_LONG=1: 150.
func TestRedisLatency(t *testing.T) {
	threads := 30
	if e2etest.Long() {
		threads = 150
	}
	f := newFleet(t, 3, "2", 0)
	ctx := context.Background()
	l := f.startLoad(ctx, "lat", threads, 32, false, faultMix...)
	defer l.end()
	w := f.watchDocs(l.threadIDs)
	if !waitFor(60*time.Second, func() bool { return l.actions.Load() >= int64(threads) }) {
		t.Fatalf("the load did only %d actions in 60 s", l.actions.Load())
	}
	for _, r := range f.reps {
		if _, err := r.proxy.AddToxic("slow", "latency", "downstream", 1, map[string]any{"latency": 100, "jitter": 50}); err != nil {
			t.Fatal(err)
		}
	}
	before := l.actions.Load()
	if !waitFor(60*time.Second, func() bool { return l.actions.Load() >= before+int64(threads) }) {
		t.Fatalf("the load stalled under 100 ms of latency")
	}
	for _, r := range f.reps {
		if err := r.proxy.RemoveToxic("slow"); err != nil {
			t.Fatal(err)
		}
	}
	p := f.reps[0].proxy
	if _, err := p.AddToxic("stall", "latency", "upstream", 1, map[string]any{"latency": 2500}); err != nil {
		t.Fatal(err)
	}
	stalled := time.Now()
	time.Sleep(3 * time.Second) // the fault itself: 1.5× the lease TTL
	if err := p.RemoveToxic("stall"); err != nil {
		t.Fatal(err)
	}
	unstalled := time.Now()
	f.finish(t, ctx, l, w)
	n, longest := f.h.during(0, stalled, unstalled)
	t.Logf("served by the stalled replica across the stall: %s; the longest took %v", formatCounts(n), longest.Round(time.Millisecond))
	if longest < 2500*time.Millisecond {
		t.Errorf("no request of the stalled replica met the stall")
	}
}

// TestPartitionFromRedis cuts one replica, A, off from Redis (toxiproxy
// timeout toxics: nothing passes either way, connections stay open) for
// 2× the lease TTL of 2 s, while A owns threads that wait on interrupts
// and streams a slow run. A stops serving: nothing sent to it during the
// partition is served, and its run does not end in success. Another
// replica takes A's threads during the partition: every waiting
// interrupt is resumed through B or C, and an observer through them
// follows the slow run. After the partition heals, A never writes a
// stale document: the threads B and C took are stored as they left them,
// and no document's revision or fencing counter ever goes back. A then
// serves again, and the history check holds.
//
// CI: 6 waiting threads; IAC_CODE_AGUI_LONG=1: 40.
func TestPartitionFromRedis(t *testing.T) {
	waiting := 6
	if e2etest.Long() {
		waiting = 40
	}
	f := newFleet(t, 3, "2", 1500*time.Millisecond)
	ctx := context.Background()
	others := []int{1, 2}
	var ths []*thread
	ids := map[string][]string{}
	for i := range waiting {
		th := f.newThread(fmt.Sprintf("part-wait-%d", i), false)
		ths = append(ths, th)
		run := th.runID("perm")
		a, _ := th.serve(ctx, "permission", run, "", th.input(run, "Deploy the stack (permission)", nil), nil, 0)
		if a.terminal != "interrupt" || f.ownerOf(th.id) != 0 {
			t.Fatalf("%s on A: %s, owner %d", th.id, a.result(), f.ownerOf(th.id))
		}
		ids[th.id] = a.interrupts
	}
	slow := f.newThread("part-slow", false)
	ths = append(ths, slow)
	w := f.watchDocs(func() []string {
		out := make([]string, len(ths))
		for i, th := range ths {
			out[i] = th.id
		}
		return out
	})
	execs := make(chan string, 1)
	var slowRun *attempt
	var runs, taken sync.WaitGroup
	defer runs.Wait()
	defer taken.Wait()
	slowID := slow.runID("turn")
	runs.Go(func() {
		slowRun, _ = slow.serve(ctx, "turn", slowID, "", slow.input(slowID, "slow", nil), func(ev map[string]any) {
			if e := executionOf(ev); e != "" {
				select {
				case execs <- e:
				default: // the session event again, at the end
				}
			}
		}, 0)
		close(execs)
	})
	exec, ok := <-execs
	if !ok {
		t.Fatalf("the slow run on A sent no session event: %s", slowRun.result())
	}

	p := f.reps[0].proxy
	for _, dir := range []string{"upstream", "downstream"} {
		if _, err := p.AddToxic("partition-"+dir, "timeout", dir, 1, map[string]any{"timeout": 0}); err != nil {
			t.Fatal(err)
		}
	}
	cut := time.Now()
	heal := cut.Add(4 * time.Second) // 2× the lease TTL

	// Straight to A, nothing is served: turns of a new thread.
	probe := f.newThread("part-probe", false)
	probe.only = []int{0}
	var probes []*attempt
	runs.Go(func() {
		for time.Now().Before(heal.Add(-time.Second)) {
			run := probe.runID("turn")
			a := &attempt{thread: probe.id, kind: "probe", runID: run, replica: 0, reqID: fmt.Sprintf("%s.%d", probe.id, probe.reqs.Add(1))}
			f.send(ctx, a, "", probe.input(run, "hello", nil), nil)
			probes = append(probes, a)
		}
	})
	// Through B and C, A's threads are served during the partition.
	resumed := make([]time.Time, len(ths))
	for i, th := range ths[:waiting] {
		th.only = others
		taken.Go(func() {
			if th.resume(ctx, ids[th.id], 0) {
				resumed[i] = time.Now()
			}
		})
	}
	var observed *attempt
	slow.only = others
	taken.Go(func() {
		for time.Now().Before(heal) {
			o, _ := slow.serve(ctx, "observe", slowID, "extensions/iac-code/v1/executions/"+exec+"/subscribe",
				map[string]any{"threadId": slow.id, "runId": slowID, "rosInvocationId": slow.inv}, nil)
			if o.status == 200 {
				observed = o
				return
			}
		}
	})
	taken.Wait()
	for i, at := range resumed[:waiting] {
		if at.IsZero() || at.After(heal) {
			t.Errorf("%s was not resumed through another replica during the partition (at %v, %v after the cut)", ths[i].id, at.Format(timeFmt), at.Sub(cut))
		}
	}
	if observed == nil {
		t.Errorf("no other replica took the slow run's thread during the partition")
	}
	// What B and C left of the threads they took, before A's link heals.
	stored := map[string]docState{}
	for _, th := range ths {
		s, err := f.docState(ctx, th.id)
		if err != nil {
			t.Fatal(err)
		}
		stored[th.id] = s
	}
	time.Sleep(time.Until(heal)) // the fault itself lasts 2× the TTL
	for _, dir := range []string{"upstream", "downstream"} {
		if err := p.RemoveToxic("partition-" + dir); err != nil {
			t.Fatal(err)
		}
	}
	healed := time.Now()
	runs.Wait()
	t.Logf("the slow run on A ended %s %v after the cut, its last event before that %v after it; %d probes of A: %s", slowRun.result(),
		slowRun.end.Sub(cut).Round(time.Millisecond), slowRun.lastContent.Sub(cut).Round(time.Millisecond), len(probes), results(probes))
	if observed != nil {
		t.Logf("B or C observed the slow run from %v after the cut", observed.started.Sub(cut).Round(time.Millisecond))
	}
	if slowRun.terminal == "success" {
		t.Errorf("A's run ended in success after another replica took its thread")
	}
	for _, a := range probes {
		if a.status == 200 {
			t.Errorf("A served %s during the partition: %s", a.reqID, a.result())
		}
	}
	// A recovers, and has written nothing to the threads it lost.
	recovered := f.newThread("part-after", false)
	recovered.only = []int{0}
	recovered.turn(ctx, "hello")
	t.Logf("A served a new thread %v after the partition healed", time.Since(healed).Round(time.Millisecond))
	for _, th := range ths {
		s, err := f.docState(ctx, th.id)
		if err != nil {
			t.Fatal(err)
		}
		if s != stored[th.id] {
			t.Errorf("%s changed after the partition healed, before any new request: %+v → %+v", th.id, stored[th.id], s)
		}
	}
	f.finish(t, ctx, &load{}, w, append(slices.Clone(ths), probe, recovered)...)
}

// results counts attempts by result.
func results(as []*attempt) string {
	n := map[string]int{}
	for _, a := range as {
		n[a.result()]++
	}
	return formatCounts(n)
}

// TestConnectionCutMidPipeline cuts one replica's connections to Redis
// in the middle of its pipelines while a mixed load runs: first every
// connection is closed after 2 KiB of answers (limit_data), then every
// connection is reset (RST) 50 ms after its first request (reset_peer).
// The replica does not panic, every request gets a documented answer,
// what the clients were told is what the store holds (as in
// TestRedisLatency), and once the toxics are gone the replica serves a
// new thread.
//
// CI: 30 threads; IAC_CODE_AGUI_LONG=1: 150.
func TestConnectionCutMidPipeline(t *testing.T) {
	threads := 30
	if e2etest.Long() {
		threads = 150
	}
	f := newFleet(t, 3, "3", 0)
	ctx := context.Background()
	l := f.startLoad(ctx, "cut", threads, 32, false, faultMix...)
	defer l.end()
	w := f.watchDocs(l.threadIDs)
	if !waitFor(60*time.Second, func() bool { return l.actions.Load() >= int64(threads) }) {
		t.Fatalf("the load did only %d actions in 60 s", l.actions.Load())
	}
	p := f.reps[1].proxy
	for _, toxic := range []struct {
		typ, stream string
		attrs       map[string]any
	}{
		{"limit_data", "downstream", map[string]any{"bytes": 2048}},
		{"reset_peer", "upstream", map[string]any{"timeout": 50}},
	} {
		if _, err := p.AddToxic("cut", toxic.typ, toxic.stream, 1, toxic.attrs); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // the fault itself
		if err := p.RemoveToxic("cut"); err != nil {
			t.Fatal(err)
		}
	}
	healed := time.Now()
	after := f.newThread("cut-after", false)
	after.only = []int{1}
	after.turn(ctx, "hello")
	t.Logf("the replica served a new thread %v after the cut ended", time.Since(healed).Round(time.Millisecond))
	f.finish(t, ctx, l, w, after)
	t.Logf("the cut replica's warnings: %s", formatCounts(f.reps[1].warnings()))
	if len(f.reps[1].warnings()) == 0 {
		t.Errorf("the cut replica noticed nothing")
	}
}
