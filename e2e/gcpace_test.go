package e2e

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// TestCollectorPacing: the binary gives a small heap a headroom before the
// next collection (GOGC over 100, up to 1,600, as /metrics reports it),
// and leaves a GOGC set in its environment alone (docs/decisions.md).
func TestCollectorPacing(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		ok   func(float64) bool
		want string
	}{
		{"unset", nil, func(v float64) bool { return v > 100 && v <= 1600 }, "101..1600"},
		{"GOGC=150", []string{"GOGC=150"}, func(v float64) bool { return v == 150 }, "150"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startServer(t, "", c.env...)
			cwd := filepath.Join(s.Root, "ws")
			var gogc, cycles float64
			// Runs allocate; the pacing acts after a collection, so judge
			// only once two have run.
			for i := range 200 {
				if status, _, _ := runAGUI(t, s.URL, runInput(fmt.Sprintf("thread-gc-%d", i), "run-1", "hello", cwd, nil)); status != 200 {
					t.Fatalf("run %d: status %d", i, status)
				}
				gogc, cycles = gcMetrics(t, s.URL)
				if cycles >= 2 {
					break
				}
			}
			if cycles < 2 || !c.ok(gogc) {
				t.Fatalf("go_gc_gogc_percent %v after %v collections, want %s", gogc, cycles, c.want)
			}
		})
	}
}

// gcMetrics scrapes the collector's GOGC and its number of cycles.
func gcMetrics(t *testing.T, url string) (gogc, cycles float64) {
	t.Helper()
	res, err := http.Get(url + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	gogc = e2etest.Sample(string(body), "go_gc_gogc_percent")
	cycles = e2etest.Sample(string(body), "go_gc_duration_seconds_count")
	if gogc < 0 || cycles < 0 {
		t.Fatalf("/metrics lacks go_gc_gogc_percent or go_gc_duration_seconds_count:\n%.2000s", body)
	}
	return gogc, cycles
}
