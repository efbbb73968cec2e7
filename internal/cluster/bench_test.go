package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
)

// BenchmarkTurns measures normal turns (a new thread each) through real
// loopback HTTP against the embedded agent, with the thread state in files,
// in Redis with one replica (AOF fsync every second, and on every write),
// and in Redis with three replicas that forward
// to each other (requests round-robin over them). It reports turns per
// second and the mean time to RUN_STARTED. Run with
//
//	go test -run '^$' -bench Turns -benchtime 400x ./internal/cluster
//
// (docs/scale-out.md has figures). It needs a redis-server.
func BenchmarkTurns(b *testing.B) {
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler))
	b.Cleanup(func() { slog.SetDefault(prev) })
	b.Run("file", func(b *testing.B) {
		root, _ := filepath.EvalSymlinks(b.TempDir())
		url := fileReplica(b, root)
		benchTurns(b, []string{url}, root)
	})
	b.Run("redis-1", func(b *testing.B) {
		f := newFleet(b, 15*time.Second)
		benchTurns(b, []string{f.start(b, true).url}, f.root)
	})
	b.Run("redis-1-fsync-always", func(b *testing.B) {
		f := newFleet(b, 15*time.Second)
		f.redisURL = redistest.Start(b, "always").URL
		benchTurns(b, []string{f.start(b, true).url}, f.root)
	})
	b.Run("redis-3", func(b *testing.B) {
		f := newFleet(b, 15*time.Second)
		var urls []string
		for range 3 {
			urls = append(urls, f.start(b, true).url)
		}
		benchTurns(b, urls, f.root)
	})
}

func fileReplica(b *testing.B, root string) string {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	agent, err := demoagent.Start(ctx, "127.0.0.1:0", demoagent.Options{Token: "up"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = agent.Close() })
	store := filestore.New(b.TempDir())
	ad := adapter.New(adapter.Options{
		Store:        store,
		Upstream:     adapter.A2A(a2a.New(agent.URL, "up")),
		AllowedRoots: request.AllowedRoots([]string{root}),
	})
	srv := httptest.NewServer(server.New(server.Options{Adapter: ad, Version: "bench"}))
	b.Cleanup(srv.Close)
	return srv.URL + "/"
}

func benchTurns(b *testing.B, urls []string, root string) {
	var n, firstNanos atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			body, _ := json.Marshal(map[string]any{
				"threadId": fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i), "runId": "run-1",
				"state": map[string]any{}, "tools": []any{}, "context": []any{},
				"messages":       []any{map[string]any{"id": "m", "role": "user", "content": "hello"}},
				"forwardedProps": map[string]any{"iacCode": map[string]any{"schemaVersion": 1, "rosInvocationId": "inv", "cwd": filepath.Join(root, "ws")}},
			})
			t0 := time.Now()
			res, err := http.Post(urls[int(i)%len(urls)], "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			first, finished := false, false
			for sc.Scan() {
				line := sc.Text()
				if !first && strings.Contains(line, "RUN_STARTED") {
					first = true
					firstNanos.Add(int64(time.Since(t0)))
				}
				finished = finished || strings.Contains(line, `"RUN_FINISHED"`)
			}
			res.Body.Close()
			if !finished {
				b.Errorf("turn %d did not finish", i)
			}
		}
	})
	elapsed := time.Since(start)
	b.ReportMetric(float64(n.Load())/elapsed.Seconds(), "turns/s")
	b.ReportMetric(float64(firstNanos.Load())/float64(n.Load())/1e6, "ms/first-event")
}
