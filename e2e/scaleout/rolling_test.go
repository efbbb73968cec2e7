package scaleout

import (
	"context"
	"fmt"
	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// load drives threads client threads at once (at most inFlight actions
// in flight) until stopped, each a sequence of actions through random
// replicas: a normal turn, a permission answered in a new run (with an
// observer of the interrupted execution every other time), and a run
// cancelled through the extension while an observer may follow it.
type load struct {
	threads []*thread
	stop    atomic.Bool
	actions atomic.Int64
	wg      sync.WaitGroup
}

func (f *fleet) startLoad(ctx context.Context, prefix string, threads, inFlight int, strict bool, mix ...string) *load {
	l := &load{}
	sem := make(chan struct{}, inFlight)
	for i := range threads {
		th := f.newThread(fmt.Sprintf("%s-%d", prefix, i), strict)
		l.threads = append(l.threads, th)
		l.wg.Go(func() {
			for j := 0; j < 2 || !l.stop.Load(); j++ {
				sem <- struct{}{}
				switch mix[(i+j)%len(mix)] {
				case "turn":
					th.turn(ctx, "hello")
				case "slow":
					th.turn(ctx, "slow")
				case "permission":
					th.permission(ctx, false)
				case "observed permission":
					th.permission(ctx, true)
				case "cancel":
					th.cancel(ctx)
				}
				<-sem
				l.actions.Add(1)
			}
		})
	}
	return l
}

// mixed is the rolling restart's load: turns, permissions and their
// resumes (one in two observed), cancels (observed one time in two).
var mixed = []string{"turn", "observed permission", "cancel", "permission"}

// end stops the load once every thread finished its current action (and
// its second one at least) and waits for them.
func (l *load) end() {
	l.stop.Store(true)
	l.wg.Wait()
}

// waitFor polls cond every 10 ms until it holds; false after within.
func waitFor(within time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(within); ; {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// unavailability summarises the longest refusal of each thread: the
// maximum, the 99th percentile, and how many threads were refused at all.
func (l *load) unavailability() (worst, p99 time.Duration, refusedThreads, refusals int) {
	var ws []time.Duration
	for _, th := range l.threads {
		th.mu.Lock()
		ws = append(ws, th.worst)
		if th.refusals > 0 {
			refusedThreads++
			refusals += th.refusals
		}
		th.mu.Unlock()
	}
	slices.Sort(ws)
	return ws[len(ws)-1], ws[(len(ws)*99)/100], refusedThreads, refusals
}

// problems lists the unexpected results of the load's threads.
func (l *load) problems() []string {
	var out []string
	for _, th := range l.threads {
		th.mu.Lock()
		for _, p := range th.problems {
			out = append(out, th.id+": "+p)
		}
		th.mu.Unlock()
	}
	return out
}

// TestRollingRestart restarts the three replicas one after another
// (SIGTERM, wait for the exit, start again on the same port), with the
// default lease TTL of 15 s, under a mixed load of 200 client threads
// (turns, permissions and their resumes, observers, cancels) sent to
// random replicas, each request retried on another replica while it is
// refused. No thread is refused for more than 2 s, every run ends as its
// kind promises, and the history holds no lost interrupt, no answer
// applied twice upstream and no thread streamed by two replicas at once.
//
// CI: 200 threads, one round of restarts; IAC_CODE_AGUI_LONG=1: 500
// threads, three rounds.
func TestRollingRestart(t *testing.T) {
	threads, rounds := 200, 1
	if e2etest.Long() {
		threads, rounds = 500, 3
	}
	f := newFleet(t, 3, "15", 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := f.startLoad(ctx, "roll", threads, 64, true, mixed...)
	defer l.end()
	if !waitFor(60*time.Second, func() bool { return l.actions.Load() >= int64(threads) }) {
		t.Fatalf("the load did only %d actions in 60 s", l.actions.Load())
	}
	started := time.Now()
	for round := range rounds {
		for _, r := range f.reps {
			exit, down := f.restart(r)
			t.Logf("round %d: replica %d exited %v after SIGTERM, served again %v after it", round, r.i, exit.Round(time.Millisecond), down.Round(time.Millisecond))
			// The load meets the restarted replica before the next stop.
			before := l.actions.Load()
			if !waitFor(60*time.Second, func() bool { return l.actions.Load() >= before+int64(threads) }) {
				t.Fatalf("the load stalled after the restart of replica %d", r.i)
			}
		}
	}
	restarts := time.Since(started)
	l.end()
	worst, p99, refusedThreads, refusals := l.unavailability()
	t.Logf("%d threads, %d actions, %d restarts in %v; unavailable: max %v, p99 %v; %d threads refused at least once (%d refused requests)",
		threads, l.actions.Load(), rounds*len(f.reps), restarts.Round(time.Millisecond), worst.Round(time.Millisecond), p99.Round(time.Millisecond), refusedThreads, refusals)
	t.Logf("outcomes: %s", formatCounts(f.h.outcomes()))
	if ps := l.problems(); len(ps) > 0 {
		t.Errorf("%d unexpected results, e.g.:\n%s", len(ps), strings.Join(ps[:min(len(ps), 20)], "\n"))
	}
	if worst > 2*time.Second {
		t.Errorf("a thread was refused for %v (more than 2 s)", worst)
	}
	if v := f.h.check(); len(v.problems) > 0 {
		t.Errorf("history:\n%s", strings.Join(v.problems, "\n"))
	}
}
