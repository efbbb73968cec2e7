package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
	"github.com/iac-code-agui/iac-code-agui/internal/state/storetest"
)

// TestReleaseDuringOutageNeverDropsAClaimedLease is the regression test for
// a run fenced by its own replica after a Redis restart: the renewal loop
// released an idle thread's lease while Redis was down, its call waited
// for Redis to come back, and meanwhile a request renewed that same lease
// and started writing; the late DEL then took the lease from under it.
// Claims and releases of a thread now run under one lock, so whatever
// lease a claim returns stays valid for the writes that follow.
func TestReleaseDuringOutageNeverDropsAClaimedLease(t *testing.T) {
	srv := redistest.Start(t, "always")
	c, err := redisstore.Open(srv.URL+"?max_retries=10&min_retry_backoff=20ms&max_retry_backoff=100ms", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	store := redisstore.New(c, "race:")
	cl := New(Options{Client: c, Prefix: "race:", AdvertiseURL: "http://127.0.0.1:1/", Token: "x", TTL: 10 * time.Second})
	ctx := context.Background()
	o, err := cl.Claim(ctx, "thread-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Save(state.WithLease(ctx, o.Lease), storetest.Thread("thread-1"), state.NoRevision); err != nil {
		t.Fatal(err)
	}
	o.Done() // the request ended: the thread is idle

	srv.Kill()
	released := make(chan struct{})
	go func() { cl.release(ctx, "thread-1"); close(released) }()
	// The release holds the thread's stripe while it waits on Redis.
	st := &cl.stripes[cl.stripe("thread-1")]
	for deadline := time.Now().Add(10 * time.Second); st.TryLock(); {
		st.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("the release never started")
		}
		time.Sleep(time.Millisecond)
	}
	srv.Restart(t)
	o2, err := cl.Claim(ctx, "thread-1")
	if err != nil {
		t.Fatal(err)
	}
	defer o2.Done()
	<-released
	doc, rev, err := store.Load(ctx, "thread-1")
	if err != nil {
		t.Fatal(err)
	}
	doc.RunDigests["run-2"] = "d"
	if _, err := store.Save(state.WithLease(ctx, o2.Lease), doc, rev); err != nil {
		t.Fatalf("a write under the lease the claim returned: %v", err)
	}
}

// TestRenewalAfterReleaseDoesNotRetakeTheLease is the regression test for
// a thread refused for a whole TTL after a rolling restart: a stopping
// replica released a lease while a renewal of it was on its way; run
// after the release, the renewal found no lease and the fencing token
// unchanged, took the lease again as if it had lapsed, and nobody released
// it. The renewal here carries the lease the replica held before the
// release, as that one did.
func TestRenewalAfterReleaseDoesNotRetakeTheLease(t *testing.T) {
	c, err := redisstore.Open(redistest.URL(t), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prefix := "stray-" + time.Now().Format("150405.000000") + ":"
	cl := New(Options{Client: c, Prefix: prefix, AdvertiseURL: "http://127.0.0.1:1/", Token: "x", TTL: 30 * time.Second})
	ctx := context.Background()
	o, err := cl.Claim(ctx, "thread-1")
	if err != nil {
		t.Fatal(err)
	}
	o.Done()
	held := map[string]string{"thread-1": o.Lease} // the renewal's snapshot
	cl.release(ctx, "thread-1")
	cl.renewBusy(ctx, []string{"thread-1"}, held)
	owner, _, _ := redisstore.LeaseKeys(prefix, "thread-1")
	if n, err := c.Exists(ctx, owner).Result(); err != nil || n != 0 {
		t.Fatalf("the lease released before the renewal ran exists again (%d, %v)", n, err)
	}
	if cl.Held() != 0 {
		t.Fatalf("the replica holds %d leases", cl.Held())
	}
}
