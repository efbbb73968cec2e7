package server_test

import (
	"fmt"
	"testing"
)

// TestThreadCacheEviction: with a cache of four threads, threads dropped
// from memory are reloaded from their files with their run ids and pending
// interrupts intact.
func TestThreadCacheEviction(t *testing.T) {
	e := newEnv(t, envOptions{maxCached: 4})
	it := interrupts(t, post(t, e.URL, e.body("thread-keep", "run-1", "permission", nil), nil))[0]
	for i := 0; i < 12; i++ {
		th := fmt.Sprintf("thread-fill-%d", i)
		if r := post(t, e.URL, e.body(th, "run-1", "Create a VPC template", nil), nil); r.Status != 200 {
			t.Fatalf("%s: %d", th, r.Status)
		}
	}
	if r := post(t, e.URL, e.body("thread-fill-0", "run-1", "Create a VPC template", nil), nil); r.Status != 409 {
		t.Fatalf("replay after eviction: %d", r.Status)
	} else if code, _ := errorOf(t, r); code != "DUPLICATE_RUN_ID" {
		t.Fatalf("replay after eviction: %s", code)
	}
	if r := post(t, e.URL, e.body("thread-keep", "run-2", "hello", nil), nil); r.Status != 409 {
		t.Fatalf("pending after eviction: %d", r.Status)
	}
	r := post(t, e.URL, resumeBody(e, "thread-keep", "run-3", allow(it["id"])), nil)
	if fin := last(r.Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("resume after eviction: %v", fin)
	}
}
