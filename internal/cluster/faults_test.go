package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/iac-code-agui/iac-code-agui/internal/cluster"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
)

// streamed is a run whose SSE answer is read as it arrives.
type streamed struct {
	res *http.Response
	sc  *bufio.Scanner
}

func startStream(t *testing.T, url string, body any) *streamed {
	t.Helper()
	raw, _ := json.Marshal(body)
	res, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &streamed{res: res, sc: sc}
}

// until reads events until one of the given type; false at the end.
func (s *streamed) until(typ string) bool {
	for s.sc.Scan() {
		if strings.Contains(s.sc.Text(), `"type":"`+typ+`"`) {
			return true
		}
	}
	return false
}

// last reads the stream to its end and returns its last event.
func (s *streamed) last(t *testing.T) map[string]any {
	t.Helper()
	var last map[string]any
	for s.sc.Scan() {
		if d, ok := strings.CutPrefix(s.sc.Text(), "data: "); ok {
			last = nil
			if err := json.Unmarshal([]byte(d), &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	return last
}

func (f *fleet) client(t testing.TB) redis.UniversalClient {
	t.Helper()
	rc, err := redisstore.Open(f.redisURL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// fence reads a thread's fencing counter.
func (f *fleet) fence(t testing.TB, rc redis.UniversalClient, threadID string) string {
	t.Helper()
	_, doc, _ := redisstore.LeaseKeys(f.prefix, threadID)
	v, _ := rc.HGet(context.Background(), doc, "fence").Result()
	return v
}

// TestRedisStallLongerThanTheLease: Redis is paused (SIGSTOP) for 1.5×
// the lease TTL while a run streams on its owner. The owner's lease
// lapses meanwhile, so the owner holds the run's events from the moment
// the lease may have lapsed until a renewal after the stall kept it
// (another replica could have taken it); nobody else took the thread: the
// fencing counter does not move, the run's closing write after the stall
// is stored, the run ends in success, and the thread's next interrupt is
// answered through another replica.
func TestRedisStallLongerThanTheLease(t *testing.T) {
	srv := redistest.Start(t, "everysec")
	f := newFleet(t, 2*time.Second)
	f.redisURL = srv.URL
	a, b := f.start(t, true), f.start(t, true)
	rc := f.client(t)

	s := startStream(t, a.url, f.body("thread-s", "run-1", "slow", nil))
	if !s.until("TEXT_MESSAGE_CONTENT") {
		t.Fatal("the slow run sent no text")
	}
	p, err := os.FindProcess(srv.Pid())
	if err != nil {
		t.Fatal(err)
	}
	type event struct {
		at   time.Time
		line string
	}
	events := make(chan event, 64)
	go func() {
		defer close(events)
		for s.sc.Scan() {
			if strings.HasPrefix(s.sc.Text(), "data: ") {
				events <- event{time.Now(), s.sc.Text()}
			}
		}
	}()
	stopped := time.Now()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * f.ttl / 2) // the fault itself: Redis answers nothing for 1.5× the TTL
	resumed := time.Now()
	if err := p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	var last map[string]any
	for ev := range events {
		if ev.at.After(stopped.Add(f.ttl)) && ev.at.Before(resumed) {
			t.Errorf("an event %v after the stall began, when the lease may have lapsed: %s", ev.at.Sub(stopped), ev.line)
		}
		last = nil
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev.line, "data: ")), &last); err != nil {
			t.Fatal(err)
		}
	}
	if out, _ := last["outcome"].(map[string]any); last["type"] != "RUN_FINISHED" || out["type"] != "success" {
		t.Fatalf("the run across the stall ended %v", last)
	}
	doc, _, err := redisstore.New(rc, f.prefix).Load(context.Background(), "thread-s")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(doc.TerminalExecutionIDs, doc.Execution.ExecutionID) {
		t.Fatalf("the closing write after the stall was lost: %+v", doc.Execution)
	}
	if got := f.fence(t, rc, "thread-s"); got != "1" {
		t.Fatalf("fencing counter %q after the stall, want 1 (the lease was re-taken, not taken anew)", got)
	}
	id := interruptID(t, post(t, a.url, f.body("thread-s", "run-2", "permission", nil)))
	if r := post(t, b.url, f.body("thread-s", "run-3", "", allow(id))); !success(r) {
		t.Fatalf("resume after the stall: %d %s %v", r.status, r.code, r.last())
	}
}

// TestLeaseTakenMidRunFailsClosed: while a run streams on A, another
// replica takes the thread (A's lease is deleted and B claims it, which
// is what a partition of A from Redis for longer than the TTL leaves
// behind; the partition itself is not reproduced here). A's closing write
// is refused, so the run ends RUN_ERROR OWNER_UNAVAILABLE, never success,
// and the stored document is B's, untouched by A.
func TestLeaseTakenMidRunFailsClosed(t *testing.T) {
	f := newFleet(t, 30*time.Second)
	a, b := f.start(t, true), f.start(t, true)
	rc := f.client(t)
	s := startStream(t, a.url, f.body("thread-m", "run-1", "slow", nil))
	if !s.until("TEXT_MESSAGE_CONTENT") {
		t.Fatal("the slow run sent no text")
	}
	owner, _, _ := redisstore.LeaseKeys(f.prefix, "thread-m")
	if err := rc.Del(context.Background(), owner).Err(); err != nil {
		t.Fatal(err)
	}
	o, err := b.cl.Claim(context.Background(), "thread-m")
	if err != nil || !o.Local || !o.Acquired {
		t.Fatalf("take-over by B: %+v %v", o, err)
	}
	defer o.Done()
	store := redisstore.New(rc, f.prefix)
	_, before, err := store.Load(context.Background(), "thread-m")
	if err != nil {
		t.Fatal(err)
	}
	last := s.last(t)
	if last["type"] != "RUN_ERROR" || last["code"] != "OWNER_UNAVAILABLE" {
		t.Fatalf("the run that lost its thread ended %v", last)
	}
	doc, after, err := store.Load(context.Background(), "thread-m")
	if err != nil || after != before || slices.Contains(doc.TerminalExecutionIDs, doc.Execution.ExecutionID) {
		t.Fatalf("the former owner wrote: revision %s → %s, %v", before, after, err)
	}
	if got := f.fence(t, rc, "thread-m"); got != "2" {
		t.Fatalf("fencing counter %q, want 2", got)
	}
}

// TestRequestsOfUnknownThreadsLeaveNoKeys: 200 authenticated cancels and
// observations of threads that do not exist write nothing to Redis, and
// a run refused at admission leaves only keys that expire.
func TestRequestsOfUnknownThreadsLeaveNoKeys(t *testing.T) {
	f := newFleet(t, 2*time.Second)
	a := f.start(t, true)
	rc := f.client(t)
	for i := range 200 {
		path := "cancel"
		if i%2 == 1 {
			path = "subscribe"
		}
		res, err := http.Post(fmt.Sprintf("%sextensions/iac-code/v1/executions/exec-%d/%s", a.url, i, path), "application/json",
			strings.NewReader(fmt.Sprintf(`{"threadId":"ghost-%d","rosInvocationId":"inv-1","runId":"r"}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == 200 || res.StatusCode >= 500 {
			t.Fatalf("%s of an unknown thread: %d", path, res.StatusCode)
		}
	}
	keys, err := rc.Keys(context.Background(), f.prefix+"*").Result()
	if err != nil || len(keys) != 0 {
		t.Fatalf("keys after requests of unknown threads: %v %v", keys, err)
	}
	// A run the adapter refuses (its cwd is outside the allowed roots).
	bad := f.body("ghost-run", "run-1", "hello", nil)
	bad["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["cwd"] = "/"
	if r := post(t, a.url, bad); r.status != 400 {
		t.Fatalf("refused run: %d %s", r.status, r.code)
	}
	f.waitLeaseGone(t, "ghost-run", 10*time.Second) // released as idle
	keys, _ = rc.Keys(context.Background(), f.prefix+"*").Result()
	for _, k := range keys {
		if ttl, err := rc.PTTL(context.Background(), k).Result(); err != nil || ttl < 0 {
			t.Fatalf("key %s has no expiry (%v %v)", k, ttl, err)
		}
	}
}

// TestGracefulHandOver: a replica holding two threads that wait on
// interrupts and one run in progress is stopped as on SIGTERM, with a
// lease TTL of 30 s. The waiting threads are served by another replica
// within 2 s of the stop; the running one finishes its run and then
// moves; when the stop returns the replica holds no lease and none is
// left in Redis.
func TestGracefulHandOver(t *testing.T) {
	f := newFleet(t, 30*time.Second)
	a, b := f.start(t, true), f.start(t, true)
	pipeline := map[string]any{"runMode": "pipeline"}
	ids := map[string]string{}
	for _, th := range []string{"thread-h1", "thread-h2"} {
		ids[th] = interruptID(t, post(t, a.url, f.body(th, "run-1", "permission", nil)))
	}
	q := post(t, a.url, f.bodyWith("thread-hq", "run-1", "Plan a deployment and ask me a question", nil, pipeline))
	qid := interruptID(t, q)
	s := startStream(t, a.url, f.body("thread-hs", "run-1", "slow", nil))
	if !s.until("TEXT_MESSAGE_CONTENT") {
		t.Fatal("the slow run sent no text")
	}
	start := time.Now()
	stopped := make(chan struct{})
	go func() { defer close(stopped); a.term(t) }()
	for _, th := range []string{"thread-h1", "thread-h2", "thread-hq"} {
		f.waitLeaseGone(t, th, 2*time.Second)
	}
	released := time.Since(start)
	for _, th := range []string{"thread-h1", "thread-h2"} {
		// A normal-mode wait lived in A's agent: B ends it truthfully.
		if r := post(t, b.url, f.body(th, "run-2", "", allow(ids[th]))); r.last()["code"] != "EXECUTION_LOST" {
			t.Fatalf("%s through B after the stop: %d %s %v", th, r.status, r.code, r.last())
		}
	}
	out, _ := q.last()["outcome"].(map[string]any)
	it := out["interrupts"].([]any)[0].(map[string]any)
	choice := it["metadata"].(map[string]any)["standardOptions"].([]any)[0].(map[string]any)["id"]
	r := post(t, b.url, f.bodyWith("thread-hq", "run-2", "", []map[string]any{{"interruptId": qid, "status": "resolved", "payload": map[string]any{"selectedId": choice}}}, pipeline))
	if !success(r) {
		t.Fatalf("the pipeline did not continue on B: %d %s %v", r.status, r.code, r.last())
	}
	if last := s.last(t); last["type"] != "RUN_FINISHED" {
		t.Fatalf("the run in progress at the stop ended %v", last)
	}
	<-stopped
	if n := a.cl.Held(); n != 0 {
		t.Fatalf("the stopped replica still holds %d leases", n)
	}
	f.waitLeaseGone(t, "thread-hs", time.Second)
	t.Logf("waiting threads released %v after the stop", released)
}

// TestForwardOnlyToConfiguredReplicas: a lease that names a URL outside
// the configured replicas gets 503 OWNER_UNAVAILABLE, and nothing at all
// is sent to that URL (the client's Authorization and the replica token
// included).
func TestForwardOnlyToConfiguredReplicas(t *testing.T) {
	f := newFleet(t, 30*time.Second)
	a := f.start(t, true)
	rc := f.client(t)
	var hits atomic.Int32
	stranger := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer stranger.Close()
	owner, _, _ := redisstore.LeaseKeys(f.prefix, "thread-x")
	if err := rc.Set(context.Background(), owner, "someone "+stranger.URL+"/ 1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	r := post(t, a.url, f.body("thread-x", "run-1", "hello", nil))
	if r.status != 503 || r.code != "OWNER_UNAVAILABLE" || r.header.Get("Retry-After") == "" {
		t.Fatalf("request of a thread owned by an unlisted URL: %d %s %q", r.status, r.code, r.header.Get("Retry-After"))
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the unlisted URL", n)
	}
}

// TestForwardHeaders: a forwarded request carries the client's
// Authorization and the replica token to a configured owner, never a
// hop-by-hop header, and the owner's hop-by-hop headers do not come back;
// its SSE events arrive one by one, before the owner's answer ends.
func TestForwardHeaders(t *testing.T) {
	got := make(chan http.Header, 1)
	release := make(chan struct{})
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Connection", "X-Owner-Hop")
		w.Header().Set("X-Owner-Hop", "x")
		_, _ = w.Write([]byte("data: first\n\n"))
		http.NewResponseController(w).Flush()
		<-release
		_, _ = w.Write([]byte("data: second\n\n"))
	}))
	defer owner.Close()
	cl := cluster.New(cluster.Options{AdvertiseURL: "http://127.0.0.1:1/", ReplicaURLs: []string{owner.URL}, Token: "replicas"})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := cl.Forward(w, r, []byte("{}"), cluster.Owner{URL: owner.URL + "/"}); err != nil {
			t.Error(err)
		}
	}))
	defer front.Close()
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer client")
	req.Header.Set("Connection", "X-Secret-Hop")
	req.Header.Set("X-Secret-Hop", "must-not-pass")
	req.Header.Set("Cookie", "c=1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	h := <-got
	if h.Get("Authorization") != "Bearer client" || h.Get(cluster.ReplicaHeader) != "replicas" || h.Get("X-Secret-Hop") != "" || h.Get("Cookie") != "" {
		t.Fatalf("headers at the owner: %v", h)
	}
	if res.Header.Get("X-Owner-Hop") != "" {
		t.Fatalf("the owner's hop-by-hop header came back: %v", res.Header)
	}
	sc := bufio.NewScanner(res.Body)
	if !sc.Scan() || sc.Text() != "data: first" {
		t.Fatalf("first event not relayed before the answer ended: %q", sc.Text())
	}
	close(release)
	for sc.Scan() {
	}
}

// TestDrainingReplicaServesOnlyItsRuns: once a replica drains (SIGTERM),
// it still serves the requests of a run in progress on it, so a cancel
// sent through another replica reaches the run and ends it CANCELLED;
// a request of any other thread gets the retryable 503 OWNER_UNAVAILABLE
// with Retry-After, and takes no lease. Drained is closed once the run
// has ended.
func TestDrainingReplicaServesOnlyItsRuns(t *testing.T) {
	f := newFleet(t, 30*time.Second)
	a, b := f.start(t, true), f.start(t, true)
	s := startStream(t, a.url, f.body("thread-d", "run-1", "cancel me", nil))
	var execID string
	for execID == "" && s.sc.Scan() {
		if d, ok := strings.CutPrefix(s.sc.Text(), "data: "); ok && strings.Contains(d, "iac-code.session.v1") {
			var ev struct{ Value struct{ ExecutionID string } }
			_ = json.Unmarshal([]byte(d), &ev)
			execID = ev.Value.ExecutionID
		}
	}
	a.cl.Drain(context.Background())
	select {
	case <-a.cl.Drained():
		t.Fatal("drained while a run is in progress")
	default:
	}
	r := post(t, a.url, f.body("thread-other", "run-1", "hello", nil))
	if r.status != 503 || r.code != "OWNER_UNAVAILABLE" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("new thread on the draining replica: %d %s %q", r.status, r.code, r.header.Get("Retry-After"))
	}
	f.waitLeaseGone(t, "thread-other", time.Second)
	res, err := http.Post(b.url+"extensions/iac-code/v1/executions/"+execID+"/cancel", "application/json",
		strings.NewReader(`{"threadId":"thread-d","rosInvocationId":"inv-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("cancel through B of the draining replica's run: %d", res.StatusCode)
	}
	if last := s.last(t); last["type"] != "RUN_ERROR" || last["code"] != "CANCELLED" {
		t.Fatalf("the run on the draining replica ended %v", last)
	}
	select {
	case <-a.cl.Drained():
	case <-time.After(5 * time.Second):
		t.Fatal("not drained 5 s after the last run ended")
	}
	f.waitLeaseGone(t, "thread-d", 5*time.Second)
	if r := post(t, b.url, f.body("thread-d", "run-2", "hello", nil)); !success(r) {
		t.Fatalf("next turn through B: %d %s %v", r.status, r.code, r.last())
	}
}
