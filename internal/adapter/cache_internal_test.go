package adapter

import (
	"context"
	"fmt"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// TestCacheShrinksAfterABurst: threads in use are kept however many they
// are; once their holders let go, the cache is back within its bound
// without another thread having to come.
func TestCacheShrinksAfterABurst(t *testing.T) {
	a := New(Options{Store: state.NewMemStore(), MaxCachedThreads: 3})
	ctx := context.Background()
	var held []*thread
	for i := range 10 {
		th, err := a.acquire(ctx, fmt.Sprintf("thread-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, th)
	}
	if n := len(a.threads); n != 10 {
		t.Fatalf("%d threads cached while all 10 are in use", n)
	}
	for i, th := range held {
		a.unpin(fmt.Sprintf("thread-%d", i), th)
	}
	if n := len(a.threads); n != 3 {
		t.Fatalf("%d threads cached after the burst, want the bound 3", n)
	}
}
