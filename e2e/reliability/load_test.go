package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// TestLoad runs many threads at once against the real binary and its
// embedded agent, each a sequence of runs mixing normal turns, permission
// interrupts answered in a new run, cancellations through the extension and
// client disconnects. Every run must end as its kind promises (zero
// unexpected errors), and afterwards the binary's goroutines, open file
// descriptors and memory come back near their baseline.
//
// CI: 100 threads × 5 runs; IAC_CODE_AGUI_LONG=1: 500 × 20.
func TestLoad(t *testing.T) {
	threads, runs := 100, 5
	if e2etest.Long() {
		threads, runs = 500, 20
	}
	s := startServer(t, serverOpts{})
	cwd := filepath.Join(s.Root, "ws")
	pid := s.cmd.Process.Pid
	warm := func() {
		if status, evs, body := post(t, s.URL, input("t-warm", "run-"+strconv.FormatInt(time.Now().UnixNano(), 10), "hello", cwd, nil)); status != 200 || outcome(evs) != "success" {
			t.Fatalf("warm-up: %d %.200s", status, body)
		}
	}
	warm()
	baseG, baseFD, baseRSS := procStats(t, s.URL, pid)
	baseHeap := lastHeapKiB

	// Two identical rounds: what each leaves behind beyond the baseline
	// must be the connection pools (the adapter's A2A client keeps up to
	// 64 idle connections to the agent, 3 goroutines and 2 descriptors
	// each, in this one process): a leak grows with every run.
	var after [2][3]int
	for round := range 2 {
		counts, elapsed, failures := loadRound(s.URL, cwd, threads, runs, round)
		if len(failures) > 0 {
			t.Fatalf("round %d: %d unexpected results, e.g.:\n%s", round, len(failures), strings.Join(failures, "\n"))
		}
		// Disconnected runs finish their cancellations in the background.
		var g, fd, rss int
		for deadline := time.Now().Add(10 * time.Second); ; {
			g, fd, rss = procStats(t, s.URL, pid)
			if g <= baseG+poolGoroutines || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		after[round] = [3]int{g, fd, lastHeapKiB}
		t.Logf("round %d: %d threads × %d runs (%v) in %v: goroutines %d → %d, fds %d → %d, RSS %d → %d KiB, heap in use %d → %d KiB",
			round, threads, runs, counts, elapsed.Round(time.Millisecond), baseG, g, baseFD, fd, baseRSS, rss, baseHeap, lastHeapKiB)
	}
	// Each round ran 125 disconnects and 125 cancellations: a leak of one
	// goroutine or descriptor per run would exceed the pools' bound.
	for round, a := range after {
		if a[0] > baseG+poolGoroutines || a[1] > baseFD+poolFDs {
			t.Fatalf("round %d left goroutines %d (baseline %d), fds %d (baseline %d): more than the pools explain", round, a[0], baseG, a[1], baseFD)
		}
	}
	// The heap in use after the second round stays within what the first
	// one left (the agent's bounded retention fills during the first).
	if h1, h0 := after[1][2], after[0][2]; h1 > h0+32<<10 {
		t.Fatalf("the second round grew the heap in use %d → %d KiB", h0, h1)
	}
	warm()
}

// poolGoroutines and poolFDs bound what idle pooled connections hold: up
// to 64 from the adapter to the agent (both ends in one process: three
// goroutines, two descriptors) and the test client's two, with some slack.
const (
	poolGoroutines = 3*64 + 2*2 + 16
	poolFDs        = 2*64 + 2 + 16
)

// loadRound runs threads × runs concurrently and returns the count per
// kind, the time taken and the unexpected results.
func loadRound(url, cwd string, threads, runs, round int) (map[string]int, time.Duration, []string) {
	var mu sync.Mutex
	var failures []string
	counts := map[string]int{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64) // at most 64 requests in flight
	start := time.Now()
	for i := range threads {
		wg.Go(func() {
			thread := fmt.Sprintf("t-load-%d-%d", round, i)
			for j := range runs {
				sem <- struct{}{}
				kind := []string{"normal", "permission", "cancel", "disconnect"}[(i+j)%4]
				err := loadRun(url, cwd, thread, j, kind)
				<-sem
				mu.Lock()
				counts[kind]++
				if err != nil && len(failures) < 20 {
					failures = append(failures, fmt.Sprintf("%s run %d (%s): %v", thread, j, kind, err))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return counts, time.Since(start), failures
}

// loadRun performs one run of the given kind on thread and checks its end.
func loadRun(url, cwd, thread string, j int, kind string) error {
	run := fmt.Sprintf("run-%d", j)
	switch kind {
	case "normal":
		status, evs, body := postQuiet(url, input(thread, run, "hello", cwd, nil))
		if status != 200 || outcome(evs) != "success" {
			return fmt.Errorf("%d %.160s", status, body)
		}
	case "permission":
		status, evs, body := postQuiet(url, input(thread, run, "permission", cwd, nil))
		if status != 200 || outcome(evs) != "interrupt" {
			return fmt.Errorf("interrupt: %d %.160s", status, body)
		}
		id := last(evs)["outcome"].(map[string]any)["interrupts"].([]any)[0].(map[string]any)["id"]
		resume := []any{map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}}
		status, evs, body = postQuiet(url, input(thread, run+"-resume", "", cwd, resume))
		if status != 200 || outcome(evs) != "success" {
			return fmt.Errorf("resume: %d %.160s", status, body)
		}
	case "cancel":
		raw, _ := json.Marshal(input(thread, run, "cancel me", cwd, nil))
		res, err := client.Post(url, "application/json", bytes.NewReader(raw))
		if err != nil {
			return err
		}
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var exec, lastLine string
		for sc.Scan() {
			d, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			lastLine = d
			if exec == "" && strings.Contains(d, "iac-code.session.v1") {
				var ev struct{ Value struct{ ExecutionID string } }
				_ = json.Unmarshal([]byte(d), &ev)
				exec = ev.Value.ExecutionID
				cres, err := client.Post(url+"extensions/iac-code/v1/executions/"+exec+"/cancel", "application/json",
					strings.NewReader(`{"threadId":"`+thread+`","rosInvocationId":"invocation-1"}`))
				if err != nil {
					return err
				}
				cres.Body.Close()
				if cres.StatusCode != 200 {
					return fmt.Errorf("cancel route: %d", cres.StatusCode)
				}
			}
		}
		if !strings.Contains(lastLine, `"CANCELLED"`) {
			return fmt.Errorf("cancelled run ended %.160s", lastLine)
		}
	case "disconnect":
		ctx, cancel := context.WithCancel(context.Background())
		raw, _ := json.Marshal(input(thread, run, "slow", cwd, nil))
		req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			cancel()
			return err
		}
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() && !strings.Contains(sc.Text(), "TEXT_MESSAGE_CONTENT") {
		}
		cancel()
		res.Body.Close()
		// The thread is released once the adapter saw the disconnect; a
		// new turn may meet THREAD_BUSY for a moment, never for good.
		for deadline := time.Now().Add(10 * time.Second); ; {
			status, evs, body := postQuiet(url, input(thread, run+"-after", "hello", cwd, nil))
			if status == 200 && outcome(evs) == "success" {
				break
			}
			if status != 409 || !strings.Contains(body, "THREAD_BUSY") || time.Now().After(deadline) {
				return fmt.Errorf("after a disconnect: %d %.160s", status, body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// postQuiet is post without a testing.TB (it runs in many goroutines).
func postQuiet(url string, body any) (int, []map[string]any, string) {
	raw, _ := json.Marshal(body)
	res, err := client.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err.Error()
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	return res.StatusCode, e2etest.Events(buf.Bytes()), buf.String()
}

// lastHeapKiB is the heap in use at the last procStats (KiB).
var lastHeapKiB int

// procStats reads the binary's goroutines from /metrics and its open
// descriptors and resident memory (KiB) from /proc.
func procStats(t *testing.T, url string, pid int) (goroutines, fds, rssKiB int) {
	t.Helper()
	res, err := client.Get(url + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if v := e2etest.Sample(string(body), "go_goroutines"); v >= 0 {
		goroutines = int(v)
	}
	if v := e2etest.Sample(string(body), "go_memstats_heap_inuse_bytes"); v >= 0 {
		lastHeapKiB = int(v / 1024)
	}
	entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	fds = len(entries)
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rssKiB, _ = strconv.Atoi(strings.Fields(v)[0])
		}
	}
	return goroutines, fds, rssKiB
}
