package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iac-code-agui/iac-code-agui/bench/suite"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

// sectionF: start-up and memory with many thread files, and memory while
// that many distinct threads are used one after another (target 7).
func (e *env) sectionF() error {
	n := e.cfg.history
	fmt.Printf("(f) history: %d thread files\n", n)
	up, err := e.upstream("up-f", 1, false)
	if err != nil {
		return err
	}
	empty, full := filepath.Join(e.base, "state-f-empty"), filepath.Join(e.base, "state-f-full")
	if err := mkdir(empty); err != nil {
		return err
	}
	ws, err := filepath.EvalSymlinks(e.workspace)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := writeHistory(full, ws, n); err != nil {
		return err
	}
	fmt.Printf("    wrote %d thread files in %s\n", n, time.Since(start).Round(time.Millisecond))
	startup := map[string][]float64{}
	rss := map[string][]float64{}
	for round := range e.cfg.rounds {
		for _, c := range []struct{ name, dir string }{{"empty", empty}, {"full", full}} {
			ad, ready, err := e.adapter(fmt.Sprintf("adapter-f-%s-%d", c.name, round), adapterOpts{upstream: up.url, stateDir: c.dir})
			if err != nil {
				return err
			}
			time.Sleep(time.Second)
			r, err := suite.RSS(ad.pid())
			if err != nil {
				return err
			}
			ad.stop()
			startup[c.name] = append(startup[c.name], float64(ready))
			rss[c.name] = append(rss[c.name], float64(r))
			fmt.Printf("    round %d %-5s ready in %s, RSS %s\n", round+1, c.name, ms(ready), mib(float64(r)))
		}
	}
	se, sf := suite.Median(startup["empty"]), suite.Median(startup["full"])
	re, rf := suite.Median(rss["empty"]), suite.Median(rss["full"])
	w := fmt.Sprintf("(f) %d thread files", n)
	e.table.add(row{what: w + ": start-up to /health (none: " + ms(time.Duration(se)) + ")", value: ms(time.Duration(sf)), vsRef: ratio(sf, se),
		target: "equal to none", met: yes(sf <= 1.2*se+float64(20*time.Millisecond))})
	e.table.add(row{what: w + ": RSS after start (none: " + mib(re) + ")", value: mib(rf), vsRef: ratio(rf, re),
		target: "equal to none", met: yes(rf <= 1.1*re+(2<<20))})
	return e.useHistory(up.url, full, ws, n)
}

// useHistory runs one turn on each of the n stored threads, a few at a
// time, and samples the adapter's memory.
func (e *env) useHistory(upstream, dir, ws string, n int) error {
	ad, _, err := e.adapter("adapter-f-use", adapterOpts{upstream: upstream, stateDir: dir})
	if err != nil {
		return err
	}
	metrics := ad.url + "/metrics"
	time.Sleep(time.Second)
	baseRSS, _ := suite.RSS(ad.pid())
	t := suite.Target{URL: ad.url + "/", Workspace: ws}
	const workers = 32
	hc := suite.NewHTTPClient(workers)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var next, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if r := t.Run(ctx, hc, historyID(int(i)), nil); r.Err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, r.Err)
				}
			}
		})
	}
	stop := make(chan struct{})
	var samples []float64
	var sampled sync.WaitGroup
	sampled.Go(func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if r, err := suite.RSS(ad.pid()); err == nil {
					samples = append(samples, float64(r))
				}
			}
		}
	})
	wg.Wait()
	close(stop)
	sampled.Wait()
	took := time.Since(start)
	endRSS, _ := suite.RSS(ad.pid())
	heap, _ := suite.Gauge(metrics, "go_memstats_heap_inuse_bytes")
	peak, mid := 0.0, 0.0
	for i, s := range samples {
		peak = max(peak, s)
		if i == len(samples)/10 {
			mid = s
		}
	}
	note := fmt.Sprintf("%d failed", failed.Load())
	if err, ok := firstErr.Load().(error); ok {
		note += fmt.Sprintf(" (first: %.120s)", err)
	}
	e.table.add(row{what: fmt.Sprintf("(f) %d distinct threads used one after another (%d at a time, %s, %s)", n, workers, took.Round(time.Second), note),
		value:  fmt.Sprintf("RSS %s before, %s after the first 10 %%, peak %s, %s at the end; heap in use %s", mib(float64(baseRSS)), mib(mid), mib(peak), mib(float64(endRSS)), mib(heap)),
		target: "bounded", met: yes(peak <= 2*mid+(64<<20) && failed.Load() == 0)})
	return nil
}

func historyID(i int) string { return fmt.Sprintf("hist-%07d", i) }

// writeHistory fills dir with n valid thread documents for threads
// historyID(0…n-1) bound to ws: one saved through the file store, the rest
// copies with the thread id replaced (same length), written without fsync
// since only their presence matters.
func writeHistory(dir, ws string, n int) error {
	st := filestore.New(dir)
	first := historyID(0)
	if _, err := st.Save(context.Background(), state.NewThread(first, ws, nil, "exec-history", "inv-history"), state.NoRevision); err != nil {
		return err
	}
	p, err := st.Path(first)
	if err != nil {
		return err
	}
	tmpl, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	for i := 1; i < n; i++ {
		id := historyID(i)
		p, err := st.Path(id)
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, bytes.Replace(tmpl, []byte(`"`+first+`"`), []byte(`"`+id+`"`), 1), 0o600); err != nil {
			return err
		}
	}
	return nil
}
