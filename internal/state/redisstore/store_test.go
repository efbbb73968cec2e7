package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
	"github.com/iac-code-agui/iac-code-agui/internal/state/storetest"
)

var prefixes atomic.Int64

// open returns a store on the test server under a prefix of its own, so
// tests sharing a server never see each other's keys.
func open(t *testing.T, url string) *redisstore.Store {
	t.Helper()
	c, err := redisstore.Open(url, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return redisstore.New(c, fmt.Sprintf("test-%d-%d:", run, prefixes.Add(1)))
}

// run keeps prefixes apart between test runs on a shared server.
var run = time.Now().UnixNano()

func TestContract(t *testing.T) {
	url := redistest.URL(t)
	storetest.Run(t, func(t *testing.T) state.Store { return open(t, url) })
}

// TestHistory: fifty writers of one thread leave a gap-free chain of
// revisions, each saved over the one before it: no update was lost.
func TestHistory(t *testing.T) {
	s := open(t, redistest.URL(t))
	ctx := context.Background()
	if _, err := s.Save(ctx, storetest.Thread("thread-h"), state.NoRevision); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, storetest.Writers)
	for i := range storetest.Writers {
		go func() {
			for {
				doc, rev, err := s.Load(ctx, "thread-h")
				if err != nil {
					done <- err
					return
				}
				doc.RunDigests["run-"+strconv.Itoa(i)] = "d"
				if _, err = s.Save(ctx, doc, rev); !errors.Is(err, state.ErrConflict) {
					done <- err
					return
				}
			}
		}()
	}
	for range storetest.Writers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	h, err := s.History(ctx, "thread-h")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != storetest.Writers+1 {
		t.Fatalf("%d revisions, want %d", len(h), storetest.Writers+1)
	}
	for i, step := range h {
		prev := ""
		if i > 0 {
			prev = strconv.Itoa(i)
		}
		if step[0] != prev || step[1] != strconv.Itoa(i+1) {
			t.Fatalf("revision %d is %v, want [%q %d]", i, step, prev, i+1)
		}
	}
}

// TestUnreachable: a store whose Redis is gone answers ErrUnavailable,
// never a silent fallback.
func TestUnreachable(t *testing.T) {
	c, err := redisstore.Open("redis://127.0.0.1:1/0?dial_timeout=200ms&max_retries=-1", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := redisstore.New(c, "x:")
	if _, _, err := s.Load(context.Background(), "thread-1"); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Load: %v, want ErrUnavailable", err)
	}
	if _, err := s.Save(context.Background(), storetest.Thread("thread-1"), state.NoRevision); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Save: %v, want ErrUnavailable", err)
	}
}

func TestOpenRefusesOtherSchemes(t *testing.T) {
	for _, u := range []string{"http://h:1", "file", "redis://h:1?bogus_option=1"} {
		if _, err := redisstore.Open(u, ""); err == nil {
			t.Errorf("Open(%q) accepted", u)
		}
	}
}
