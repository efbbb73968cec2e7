package demoagent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"testing"
)

// turnDriver posts normal turns over loopback HTTP, each in a new context
// (the worst case: every turn leaves a task and a context behind).
type turnDriver struct {
	url    string
	token  string
	client *http.Client
	ctxOf  func(n int) string // context id of turn n; nil = a new one each turn
	n      int
}

func (d *turnDriver) turn(tb testing.TB) {
	tb.Helper()
	if err := d.post(); err != nil {
		tb.Fatal(err)
	}
}

// post runs one turn; it may be called from any goroutine.
func (d *turnDriver) post() error {
	d.n++
	ctxID := "mem-" + strconv.Itoa(d.n)
	if d.ctxOf != nil {
		ctxID = d.ctxOf(d.n)
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-` + strconv.Itoa(d.n) +
		`","role":"ROLE_USER","contextId":"` + ctxID + `","parts":[{"text":"Create a VPC template"}],` +
		`"metadata":{"iac_code":{"cwd":"/w","llm_headers":{"X-Trace":"t"}}}}}}`)
	req, _ := http.NewRequest(http.MethodPost, d.url, bytes.NewReader(body))
	req.Header.Set("A2A-Version", "1.0")
	if d.token != "" {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Contains(b, []byte("TASK_STATE_INPUT_REQUIRED")) {
		return fmt.Errorf("turn %d: %v %.200s", d.n, err, b)
	}
	return nil
}

func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// BenchmarkTurnHeapGrowth reports the heap retained per 1,000 normal
// turns, each in a new context, once the agent has run long enough for its
// default retention limits to fill (DefaultMaxIdleTasks +
// DefaultMaxIdleContexts + 1,000 warm-up turns), then over b.N rounds of
// 1,000 turns. heap-MiB is HeapInuse after a GC at the end.
//
//	go test ./internal/demoagent -run '^$' -bench TurnHeapGrowth -benchtime 10x -count 3
func BenchmarkTurnHeapGrowth(b *testing.B) {
	s, err := Start(context.Background(), "127.0.0.1:0", Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	d := &turnDriver{url: s.URL, client: &http.Client{}}
	for range DefaultMaxIdleTasks + DefaultMaxIdleContexts + 1000 {
		d.turn(b)
	}
	before := heapInuse()
	rounds := 0
	for b.Loop() {
		for range 1000 {
			d.turn(b)
		}
		rounds++
	}
	after := heapInuse()
	growth := float64(int64(after)-int64(before)) / float64(rounds)
	b.ReportMetric(growth/(1<<20), "MiB-per-1000-turns")
	b.ReportMetric(float64(after)/(1<<20), "heap-MiB")
	tasks, ctxs, _, _ := s.Agent.retained()
	b.ReportMetric(float64(tasks), "tasks")
	b.ReportMetric(float64(ctxs), "contexts")
}
