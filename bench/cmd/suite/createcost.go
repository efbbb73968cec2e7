package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/iac-code-agui/iac-code-agui/bench/suite"
)

// createCost is the median time to create (and close) one empty file in a
// new directory under parent: what a new thread's file costs the file
// store beyond its write. On ext4 without a journal it depends on how many
// inodes of the directory's block group were freed in the last seconds to
// minutes (by anyone on the machine), from about 20 µs to over 500 µs here
// (docs/benchmarks.md, "The cost of a new file"). The files stay until the
// work directory goes: removing them would slow the next creates.
func createCost(parent string) (time.Duration, error) {
	dir, err := os.MkdirTemp(parent, "create-cost-")
	if err != nil {
		return 0, err
	}
	var ds []time.Duration
	for i := range 200 {
		t0 := time.Now()
		f, err := os.Create(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			return 0, err
		}
		_ = f.Close()
		ds = append(ds, time.Since(t0))
	}
	return suite.Percentile(ds, 50), nil
}

// settledCreate is the create cost the suite waits for before (a).
const settledCreate = 100 * time.Microsecond

// settle waits, up to limit, until a create under parent costs less than
// settledCreate, and returns the last cost measured and the time waited.
// ext4 without a journal skips, for at least a minute, every inode freed
// lately, so the suite's own clean-up of a previous run (or another
// engineer's) makes every new thread cost up to a millisecond more: that
// measures the last run's deletions, not the file store.
func settle(parent string, limit time.Duration) (time.Duration, time.Duration, error) {
	start := time.Now()
	for {
		cc, err := createCost(parent)
		if err != nil || cc < settledCreate || time.Since(start) >= limit {
			return cc, time.Since(start), err
		}
		time.Sleep(5 * time.Second)
	}
}
