package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
	"github.com/iac-code-agui/iac-code-agui/internal/state/storetest"
)

// TestThreads: the walk yields every saved document once, over several
// SCAN pages, under this prefix only (one with glob characters), decoded
// as Load decodes it; histories, leases, a hash holding only the fencing
// counter and a key of another type are skipped; a document that does not
// decode, or whose thread id has another key, is reported by its file key.
func TestThreads(t *testing.T) {
	ctx := context.Background()
	c, err := redisstore.Open(redistest.URL(t), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	base := fmt.Sprintf("scan-%d-%d-", run, prefixes.Add(1))
	prefix := base + "[ab]*?:"
	s := redisstore.New(c, prefix)
	// A prefix that the pattern would match if its glob were not escaped,
	// and the plain prefix it starts with.
	for _, other := range []string{base + "a-x:", base} {
		if _, err := redisstore.New(c, other).Save(ctx, storetest.Thread("elsewhere"), state.NoRevision); err != nil {
			t.Fatal(err)
		}
	}
	ids := []string{"Thread With Spaces", strings.Repeat("長い", 60)} // an aguiid~ key and an aguihash~ key
	for i := range 300 {
		ids = append(ids, fmt.Sprintf("thread-%03d", i))
	}
	want := map[string][]byte{}
	for _, id := range ids {
		th := storetest.Thread(id)
		if _, err := s.Save(ctx, th, state.NoRevision); err != nil {
			t.Fatal(err)
		}
		fk, _ := state.FileKey(id)
		want[fk], _ = state.Encode(th)
	}
	_, fenceOnly, _ := redisstore.LeaseKeys(prefix, "fence-only")
	owner, _, _ := redisstore.LeaseKeys(prefix, "thread-000")
	for _, err := range []error{
		c.HSet(ctx, fenceOnly, "fence", 3).Err(),
		c.Set(ctx, owner, "replica url 3", 0).Err(),
		c.Set(ctx, prefix+"thread:{a-string}", "x", 0).Err(),
		c.HSet(ctx, prefix+"thread:{corrupt}", "doc", "not json", "rev", 1).Err(),
		c.HSet(ctx, prefix+"thread:{wrong-key}", "doc", want["thread-001"], "rev", 1).Err(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := map[string][]byte{}
	var bad []string
	err = s.Threads(ctx, func(fk string, th *state.Thread, err error) error {
		if err != nil {
			if !errors.Is(err, state.ErrUnavailable) || th != nil {
				t.Errorf("%s: %v, %v", fk, th, err)
			}
			bad = append(bad, fk)
			return nil
		}
		if _, dup := got[fk]; dup {
			t.Errorf("%s reported twice", fk)
		}
		got[fk], _ = state.Encode(th)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(bad)
	if fmt.Sprint(bad) != "[corrupt wrong-key]" {
		t.Errorf("reported %v, want [corrupt wrong-key]", bad)
	}
	if len(got) != len(want) {
		t.Errorf("%d documents, want %d", len(got), len(want))
	}
	for fk, w := range want {
		if !bytes.Equal(got[fk], w) {
			t.Errorf("%s: got %q", fk, got[fk])
		}
	}
	// fn's error ends the walk and is returned.
	stop := errors.New("stop")
	n := 0
	if err := s.Threads(ctx, func(string, *state.Thread, error) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("stopped walk: %v after %d", err, n)
	}
}
