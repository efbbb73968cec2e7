package adapter_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

// TestRandomInterleaving runs admissions, resumes and cancels of a few
// threads from several goroutines at once, with a cache smaller than the
// number of threads so entries are evicted and reloaded all the time, on
// the real file store. After every round it checks the invariants:
//   - no lost update: every run admitted is in its thread's stored
//     runDigests, and every answer A2A accepted has its applied digest;
//   - an answer reaches A2A at most once per interrupt;
//   - no thread stays busy: once the round is over, each thread admits a
//     new turn or asks for the resume of what it waits for.
func TestRandomInterleaving(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	up := pausing()
	f := newFixture(t, up, fixtureOptions{store: filestore.New(t.TempDir()), maxCached: 2})
	threads := []string{"thread-0", "thread-1", "thread-2", "thread-3"}

	var mu sync.Mutex
	admitted := map[string][]string{} // thread → runs admitted
	accepted := map[string][]string{} // thread → interrupts answered with success
	runs := 0
	nextRun := func() string { mu.Lock(); defer mu.Unlock(); runs++; return "run-" + itoa(runs) }

	op := func(r *rand.Rand) {
		th := threads[r.IntN(len(threads))]
		run := nextRun()
		doc, _, err := f.store.Load(context.Background(), th)
		var req = f.request(t, th, run, "go", nil)
		var answered string
		switch {
		case err == nil && len(doc.Execution.Pending) > 0 && r.IntN(3) > 0:
			for id := range doc.Execution.Pending {
				answered = id
			}
			req = f.request(t, th, run, "", allow(answered))
		case err == nil && r.IntN(4) == 0:
			_, _ = f.a.Cancel(context.Background(), doc.Execution.ExecutionID, th, "inv-1")
			return
		}
		rn, err := f.a.Admit(context.Background(), req)
		if err != nil {
			return // THREAD_BUSY, RESUME_REQUIRED, ...: refused, nothing changed
		}
		mu.Lock()
		admitted[th] = append(admitted[th], run)
		mu.Unlock()
		s := &sink{}
		rn.Stream(context.Background(), s)
		if fin, ok := s.last(t).(*agui.RunFinished); ok && fin.Outcome.Type == agui.OutcomeSuccess && answered != "" {
			mu.Lock()
			accepted[th] = append(accepted[th], answered)
			mu.Unlock()
		}
	}
	for round := 0; round < 12; round++ {
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			r := rand.New(rand.NewPCG(rng.Uint64(), uint64(w)))
			wg.Go(func() {
				for i := 0; i < 5; i++ {
					op(r)
				}
			})
		}
		wg.Wait()
		mu.Lock()
		for _, th := range threads {
			doc, _, err := f.store.Load(context.Background(), th)
			if err != nil {
				if len(admitted[th]) > 0 {
					t.Fatalf("round %d: %s: %v", round, th, err)
				}
				continue
			}
			for _, run := range admitted[th] {
				if _, ok := doc.RunDigests[run]; !ok {
					t.Fatalf("round %d: %s lost admitted %s (stored %v)", round, th, run, doc.RunDigests)
				}
			}
			for _, id := range accepted[th] {
				found := false
				for _, d := range doc.AppliedResumeDigests {
					found = found || d.InterruptID == id
				}
				if !found {
					t.Fatalf("round %d: %s lost the applied answer of %s", round, th, id)
				}
			}
		}
		mu.Unlock()
		answers := map[string]int{}
		up.mu.Lock()
		for _, c := range up.calls {
			if c.Method == "SendStreamingMessage" && c.TaskID != "" {
				answers[c.TaskID]++
			}
		}
		up.mu.Unlock()
		for task, n := range answers {
			if n > 1 {
				t.Fatalf("round %d: %d answers reached %s", round, n, task)
			}
		}
	}
	for _, th := range threads {
		_, err := f.a.Admit(context.Background(), f.request(t, th, "final-"+th, "go", nil))
		if c := codeOf(err); err != nil && c != "RESUME_REQUIRED" {
			t.Fatalf("%s after the storm: %v", th, err)
		}
	}
}
