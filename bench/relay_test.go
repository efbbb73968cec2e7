package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"strconv"
	"sync"
	"testing"
)

// benchDeltas is N of BenchmarkRelayTextDeltas; raise it to profile a long
// run: go test ./bench -run '^$' -bench 'RelayTextDeltas$' -benchtime 1x -deltas 1000000 -cpuprofile cpu.out
var benchDeltas = flag.Int("deltas", 100_000, "text deltas per run in BenchmarkRelayTextDeltas")

// TestRelayCompletes verifies the benchmark's own setup against the spec:
// every delta of the fake upstream arrives exactly once and in order, the
// assistantFinal repetition is dropped (protocol.md §4.7), the session event
// carries the identities the upstream produced (§4.14) and the run ends
// with RUN_FINISHED success (§4.4).
func TestRelayCompletes(t *testing.T) {
	const n = 2000
	e := newRelayEnv(t, upstreamOptions{deltas: n, numbered: true, assistantFinal: true})
	const threadID, runID = "thread-complete", "run-complete"
	res, err := e.run(context.Background(), threadID, runID, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.check(n); err != nil {
		t.Fatal(err)
	}
	up := e.Upstream.lastSeen()
	if up.a2aVersion != "1.0" {
		t.Errorf("A2A-Version header %q, want 1.0", up.a2aVersion)
	}
	sum := sha256.Sum256([]byte(threadID))
	if want := "agui-" + hex.EncodeToString(sum[:])[:40]; up.contextID != want {
		t.Errorf("upstream got contextId %q, want %q (protocol.md §3.5)", up.contextID, want)
	}

	evs := make([]map[string]any, len(res.Raw))
	for i, raw := range res.Raw {
		if err := json.Unmarshal(raw, &evs[i]); err != nil {
			t.Fatalf("frame %d is not JSON: %v: %.200s", i, err, raw)
		}
		if _, ok := evs[i]["timestamp"].(float64); !ok {
			t.Fatalf("frame %d has no numeric timestamp: %.200s", i, raw)
		}
	}
	if got, want := len(evs), n+5; got != want {
		t.Fatalf("got %d events, want %d (RUN_STARTED, CUSTOM, TEXT_MESSAGE_START, %d contents, TEXT_MESSAGE_END, RUN_FINISHED)", got, want, n)
	}
	msgID := up.taskID + "-message"
	wantHead := []map[string]any{
		{"type": "RUN_STARTED", "threadId": threadID, "runId": runID},
		{"type": "CUSTOM", "name": "iac-code.session.v1"},
		{"type": "TEXT_MESSAGE_START", "messageId": msgID, "role": "assistant"},
	}
	for i, want := range wantHead {
		assertFields(t, i, evs[i], want)
	}
	val, _ := evs[1]["value"].(map[string]any)
	assertFields(t, 1, val, map[string]any{
		"schemaVersion": 1.0, "threadId": threadID, "aguiRunId": runID,
		"contextId": up.contextID, "taskId": up.taskID, "sessionId": up.sessionID,
		"rosInvocationId": "invocation-" + runID,
	})
	for i := 0; i < n; i++ {
		assertFields(t, 3+i, evs[3+i], map[string]any{
			"type": "TEXT_MESSAGE_CONTENT", "messageId": msgID, "delta": "d" + strconv.Itoa(i) + " ",
		})
		if t.Failed() {
			t.FailNow()
		}
	}
	assertFields(t, n+3, evs[n+3], map[string]any{"type": "TEXT_MESSAGE_END", "messageId": msgID})
	assertFields(t, n+4, evs[n+4], map[string]any{
		"type": "RUN_FINISHED", "threadId": threadID, "runId": runID,
		"outcome": map[string]any{"type": "success"},
	})
	if _, ok := evs[n+4]["usage"]; ok {
		t.Errorf("RUN_FINISHED has usage although none was recorded (protocol.md §4.3)")
	}
}

// assertFields checks that ev has each wanted key with the wanted value;
// nested objects must match exactly.
func assertFields(t *testing.T, i int, ev, want map[string]any) {
	t.Helper()
	for k, w := range want {
		g, ok := ev[k]
		if !ok {
			t.Errorf("event %d: missing %q in %v", i, k, ev)
			continue
		}
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("event %d: %q = %s, want %s", i, k, gb, wb)
		}
	}
}

// BenchmarkRelayTextDeltas relays one run of N text deltas per iteration:
// fake upstream → adapter → lean client, all over loopback HTTP in this
// process (so the two cores are shared by all three). events/s counts
// TEXT_MESSAGE_CONTENT frames received per second of wall time.
func BenchmarkRelayTextDeltas(b *testing.B) {
	n := *benchDeltas
	e := newRelayEnv(b, upstreamOptions{deltas: n})
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		res, err := e.run(ctx, threadName("bench", i), "run", false)
		if err != nil {
			b.Fatal(err)
		}
		if err := res.check(n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/(float64(n)*float64(b.N)), "ns/event")
}

// BenchmarkRelayTextDeltasParallel runs 8 runs at once per iteration, each
// on its own thread, to show how the relay scales over concurrent streams
// (N/8 deltas each, so the total per iteration matches the serial case).
func BenchmarkRelayTextDeltasParallel(b *testing.B) {
	const runs = 8
	n := *benchDeltas / runs
	e := newRelayEnv(b, upstreamOptions{deltas: n})
	ctx := context.Background()
	b.ReportAllocs()
	iter := 0
	for b.Loop() {
		iter++
		var wg sync.WaitGroup
		errs := make([]error, runs)
		for r := 0; r < runs; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := e.run(ctx, threadName("par"+strconv.Itoa(iter), r), "run", false)
				if err == nil {
					err = res.check(n)
				}
				errs[r] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	total := float64(n) * runs * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/total, "ns/event")
}
