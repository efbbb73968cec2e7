package suite

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// LoadResult summarises n concurrent runs.
type LoadResult struct {
	Runs, Failed int
	Frames       int
	Wall         time.Duration // first request sent to last run ended
	FirstP50     time.Duration
	FirstP99     time.Duration
	FirstErr     error
}

// EventsPerSecond is the aggregate rate of frames delivered.
func (r LoadResult) EventsPerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Frames) / r.Wall.Seconds()
}

// Load starts n runs together, each on its own new thread, and waits for
// all of them (bounded by timeout).
func Load(t Target, hc *http.Client, n int, prefix string, timeout time.Duration) LoadResult {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	results := make([]Result, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-gate
			results[i] = t.Run(ctx, hc, fmt.Sprintf("%s-%d", prefix, i), nil)
		})
	}
	start := time.Now()
	close(gate)
	wg.Wait()
	out := LoadResult{Runs: n, Wall: time.Since(start)}
	firsts := make([]time.Duration, 0, n)
	for _, r := range results {
		out.Frames += r.Frames
		if r.Err != nil {
			out.Failed++
			if out.FirstErr == nil {
				out.FirstErr = r.Err
			}
			continue
		}
		firsts = append(firsts, r.First)
	}
	if ctx.Err() != nil && out.FirstErr == nil {
		out.FirstErr = ctx.Err()
	}
	out.FirstP50, out.FirstP99 = Percentile(firsts, 50), Percentile(firsts, 99)
	return out
}

// Percentile returns the p-th percentile (nearest rank) of ds.
func Percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return s[i-1]
}

// Median returns the median of xs (the lower middle for an even count).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
