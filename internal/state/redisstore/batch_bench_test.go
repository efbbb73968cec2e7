package redisstore

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
	"github.com/iac-code-agui/iac-code-agui/internal/state/storetest"
)

// BenchmarkConcurrentSaves: 1,000 goroutines each save a new thread, as
// 1,000 concurrent admissions do, against a private redis-server (AOF,
// everysec). "direct" is one script call per save (the store before the
// batcher), "batched" is Store.Save. Besides ns/op it reports the CPU of
// this process and of redis-server per save.
//
//	go test ./internal/state/redisstore -run '^$' -bench ConcurrentSaves -benchtime 20x
func BenchmarkConcurrentSaves(b *testing.B) {
	srv := redistest.Start(b, "everysec")
	pid := srv.Pid()
	for _, mode := range []string{"direct", "batched"} {
		b.Run(mode, func(b *testing.B) {
			c, err := Open(srv.URL, "")
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			s := New(c, fmt.Sprintf("bench-%s-%d:", mode, time.Now().UnixNano()))
			ctx := context.Background()
			const n = 1000
			docs := make([]*state.Thread, n)
			for i := range docs {
				docs[i] = storetest.Thread("thread-" + strconv.Itoa(i))
			}
			save := func(it, i int) error {
				t := docs[i]
				t.ThreadID = fmt.Sprintf("thread-%d-%d", it, i)
				if mode == "batched" {
					_, err := s.Save(ctx, t, state.NoRevision)
					return err
				}
				data, err := state.Encode(t)
				if err != nil {
					return err
				}
				key, history, _ := s.keys(t.ThreadID)
				owner, _, _ := LeaseKeys(s.prefix, t.ThreadID)
				return saveScript.Run(ctx, c, []string{key, history, owner}, "", data, HistoryLength, "").Err()
			}
			self0, red0 := cpuOf(b, os.Getpid()), cpuOf(b, pid)
			b.ResetTimer()
			for it := range b.N {
				var wg sync.WaitGroup
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := save(it, i); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
			}
			b.StopTimer()
			saves := float64(b.N * n)
			b.ReportMetric(float64(cpuOf(b, os.Getpid())-self0)/saves/1e3, "cpu-µs/save")
			b.ReportMetric(float64(cpuOf(b, pid)-red0)/saves/1e3, "redis-cpu-µs/save")
		})
	}
}

// cpuOf is a process's user+system CPU time so far.
func cpuOf(b *testing.B, pid int) time.Duration {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	stt, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+stt) * time.Second / 100
}

// BenchmarkLoneSave: one save at a time, the sequential turn's case: the
// batcher must cost a lone save nothing ("direct" is the script call
// without it).
//
//	go test ./internal/state/redisstore -run '^$' -bench LoneSave
func BenchmarkLoneSave(b *testing.B) {
	url := redistest.URL(b)
	for _, mode := range []string{"direct", "batched"} {
		b.Run(mode, func(b *testing.B) {
			c, err := Open(url, "")
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			s := New(c, fmt.Sprintf("lone-%s-%d:", mode, time.Now().UnixNano()))
			ctx := context.Background()
			t := storetest.Thread("thread-1")
			rev := state.NoRevision
			for b.Loop() {
				if mode == "batched" {
					if rev, err = s.Save(ctx, t, rev); err != nil {
						b.Fatal(err)
					}
					continue
				}
				data, _ := state.Encode(t)
				key, history, _ := s.keys(t.ThreadID)
				owner, _, _ := LeaseKeys(s.prefix, t.ThreadID)
				res, err := saveScript.Run(ctx, c, []string{key, history, owner}, string(rev), data, HistoryLength, "").Slice()
				if err != nil {
					b.Fatal(err)
				}
				rev = state.Revision(res[1].(string))
			}
		})
	}
}
