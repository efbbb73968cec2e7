package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iac-code-agui/iac-code-agui/bench/suite"
)

// heartbeatWait outlasts the adapter's 15 s SSE heartbeat, so every open
// stream must have received one comment before it is closed.
const heartbeatWait = 16 * time.Second

// afterCloseWait bounds the wait for the adapter to come back to its
// baseline after the streams closed: two periodic collections and the
// idle connections' timeout.
const afterCloseWait = 5 * time.Minute

// sectionC: open streams on a stalled upstream (target 4).
func (e *env) sectionC() error {
	n := e.cfg.streams
	fmt.Printf("(c) %d concurrent open streams on a stalled upstream\n", n)
	up, err := e.upstream("up-c", 0, true)
	if err != nil {
		return err
	}
	ad, _, err := e.adapter("adapter-c", adapterOpts{upstream: up.url, stateDir: filepath.Join(e.base, "state-c")})
	if err != nil {
		return err
	}
	metrics := ad.url + "/metrics"
	time.Sleep(time.Second)
	baseRSS, err := suite.RSS(ad.pid())
	if err != nil {
		return err
	}
	baseG, _ := suite.Gauge(metrics, "go_goroutines")
	baseHeap, _ := suite.Gauge(metrics, "go_memstats_heap_inuse_bytes")
	baseStack, _ := suite.Gauge(metrics, "go_memstats_stack_inuse_bytes")

	t := suite.Target{URL: ad.url + "/", Workspace: e.workspace}
	hc := suite.NewHTTPClient(n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var opened sync.WaitGroup
	opened.Add(n)
	var started atomic.Int64
	results := make([]suite.Result, n)
	var done sync.WaitGroup
	sem := make(chan struct{}, 256) // connections being opened at once
	prefix := fmt.Sprintf("c-%d", time.Now().UnixNano())
	for i := range n {
		sem <- struct{}{}
		done.Go(func() {
			once := sync.OnceFunc(func() { started.Add(1); <-sem; opened.Done() })
			results[i] = t.Run(ctx, hc, fmt.Sprintf("%s-%d", prefix, i), once)
			once()
		})
	}
	opened.Wait()
	if got := started.Load(); got != int64(n) {
		return fmt.Errorf("only %d of %d streams opened", got, n)
	}
	time.Sleep(heartbeatWait)
	openRSS, _ := suite.RSS(ad.pid())
	openG, _ := suite.Gauge(metrics, "go_goroutines")
	openHeap, _ := suite.Gauge(metrics, "go_memstats_heap_inuse_bytes")
	openStack, _ := suite.Gauge(metrics, "go_memstats_stack_inuse_bytes")
	cancel()
	done.Wait()
	hc.CloseIdleConnections()
	alive, beats := 0, 0
	var firstErr error
	for _, r := range results {
		if r.Err == nil {
			alive++
		} else if firstErr == nil {
			firstErr = r.Err
		}
		if r.Heartbeats > 0 {
			beats++
		}
	}
	// The adapter sees the disconnects, cancels the upstream tasks and
	// releases the threads. Nothing forces a collection: the heap comes
	// back with the runtime's own periodic one (every 2 minutes; sync.Pool
	// contents need two), the idle upstream connections close after the
	// Transport's idle timeout (90 s). Poll until both are back.
	var afterG, afterHeap float64
	closed := time.Now()
	for time.Since(closed) < afterCloseWait {
		afterG, _ = suite.Gauge(metrics, "go_goroutines")
		afterHeap, _ = suite.Gauge(metrics, "go_memstats_heap_inuse_bytes")
		if afterG <= baseG+10 && afterHeap <= 2*baseHeap+(8<<20) {
			break
		}
		time.Sleep(time.Second)
	}
	back := time.Since(closed).Round(time.Second)
	afterRSS, _ := suite.RSS(ad.pid())
	w := fmt.Sprintf("(c) %d open streams", n)
	e.table.add(row{what: w + ": adapter RSS (baseline " + mib(float64(baseRSS)) + ")", value: mib(float64(openRSS)),
		target: "≤ 768 MiB", met: yes(openRSS <= 768<<20 && alive == n && beats == n)})
	e.table.add(row{what: w + ": per stream", value: fmt.Sprintf("%.1f KiB RSS, %.1f KiB heap in use, %.1f KiB stacks, %.2f goroutines",
		float64(openRSS-baseRSS)/float64(n)/1024, (openHeap-baseHeap)/float64(n)/1024, (openStack-baseStack)/float64(n)/1024, (openG-baseG)/float64(n))})
	clean := fmt.Sprintf("%d / %d of %d", beats, alive, n)
	if firstErr != nil {
		clean += fmt.Sprintf(" (first error: %.160s)", firstErr)
	}
	e.table.add(row{what: w + ": streams with a heartbeat after 16 s / ended cleanly", value: clean})
	e.table.add(row{what: w + ": after closing (baseline " + fmt.Sprintf("%.0f goroutines, heap %s", baseG, mib(baseHeap)) + ")",
		value:  fmt.Sprintf("%.0f goroutines, heap %s, RSS %s, %s after the last close", afterG, mib(afterHeap), mib(float64(afterRSS)), back),
		target: "back to baseline", met: yes(afterG <= baseG+10 && afterHeap <= 2*baseHeap+(8<<20))})
	return nil
}
