package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/cluster"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
	"github.com/iac-code-agui/iac-code-agui/internal/state/storetest"
)

// replica is one adapter process image: its own embedded A2A agent, its
// own adapter and HTTP server on real loopback, and its Cluster, sharing
// one Redis with the others.
type replica struct {
	url   string
	cl    *cluster.Cluster
	srv   *httptest.Server
	agent *demoagent.Server
	stop  context.CancelFunc // ends the renewal loop
}

// term stops a replica as the binary does on SIGTERM (internal/app): it
// releases the threads nothing runs on, lets its requests end, stops
// renewing and releases every lease left.
func (r *replica) term(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.cl.Drain(ctx)
	_ = r.srv.Config.Shutdown(ctx)
	r.stop()
	r.cl.Close(ctx)
}

// waitLeaseGone polls Redis until nobody holds the thread's lease (it
// lapsed or was released).
func (f *fleet) waitLeaseGone(t testing.TB, threadID string, within time.Duration) {
	t.Helper()
	rc, err := redisstore.Open(f.redisURL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	owner, _, err := redisstore.LeaseKeys(f.prefix, threadID)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(within)
	for {
		n, err := rc.Exists(context.Background(), owner).Result()
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease of %s is still held after %v (%v)", threadID, within, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type fleet struct {
	redisURL, prefix, root string
	// backup is the session backup directory the replicas' agents share,
	// so a pipeline waiting on a lost replica continues on another.
	backup string
	ttl    time.Duration
	// addrs are the replicas' addresses, chosen up front so that every
	// replica is configured with the others' URLs (Options.ReplicaURLs);
	// next is the first one no replica has used yet.
	addrs []string
	next  int
}

// fleetSize is how many replicas a fleet may start.
const fleetSize = 3

func newFleet(t testing.TB, ttl time.Duration) *fleet {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{redisURL: redistest.URL(t), prefix: fmt.Sprintf("fleet-%d:", time.Now().UnixNano()), root: root, backup: t.TempDir(), ttl: ttl}
	for range fleetSize {
		f.addrs = append(f.addrs, "127.0.0.1:"+strconv.Itoa(e2etest.FreePort(t)))
	}
	return f
}

// urls are the base URLs of every replica of the fleet.
func (f *fleet) urls() []string {
	out := make([]string, len(f.addrs))
	for i, a := range f.addrs {
		out[i] = "http://" + a + "/"
	}
	return out
}

// start starts a replica; with renew false its leases are never renewed
// or released, as if the process had been killed after taking them.
func (f *fleet) start(t testing.TB, renew bool) *replica {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	agent, err := demoagent.Start(ctx, "127.0.0.1:0", demoagent.Options{Token: "up", BackupDir: f.backup})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := redisstore.Open(f.redisURL, "")
	if err != nil {
		t.Fatal(err)
	}
	if f.next == len(f.addrs) {
		t.Fatalf("a fleet starts at most %d replicas", len(f.addrs))
	}
	ln := listenOn(t, f.addrs[f.next])
	f.next++
	url := "http://" + ln.Addr().String() + "/"
	ad := adapter.New(adapter.Options{
		Store:        redisstore.New(rc, f.prefix),
		Upstream:     adapter.A2A(a2a.New(agent.URL, "up")),
		AllowedRoots: request.AllowedRoots([]string{f.root}),
	})
	cl := cluster.New(cluster.Options{Client: rc, Prefix: f.prefix, AdvertiseURL: url, ReplicaURLs: f.urls(), Token: "replicas", TTL: f.ttl, Busy: ad.Busy})
	rctx, stop := context.WithCancel(ctx)
	if renew {
		go cl.Run(rctx)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: server.New(server.Options{Adapter: ad, Version: "test", Cluster: cl})}}
	srv.Start()
	r := &replica{url: url, cl: cl, srv: srv, agent: agent, stop: stop}
	t.Cleanup(func() { stop(); srv.Close(); _ = agent.Close(); cancel(); _ = rc.Close() })
	return r
}

// listenOn listens on addr, retrying while a port freed a moment ago is
// still being released.
func listenOn(t testing.TB, addr string) net.Listener {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill stops a replica's HTTP server and A2A agent without releasing its
// leases, as SIGKILL would.
func (r *replica) kill() {
	r.srv.CloseClientConnections()
	r.srv.Close()
	_ = r.agent.Close()
}

func (f *fleet) body(thread, run, text string, resume []map[string]any) map[string]any {
	return f.bodyWith(thread, run, text, resume, nil)
}

// bodyWith adds extra forwardedProps.iacCode fields.
func (f *fleet) bodyWith(thread, run, text string, resume []map[string]any, extra map[string]any) map[string]any {
	ic := map[string]any{"schemaVersion": 1, "rosInvocationId": "inv-1", "cwd": filepath.Join(f.root, "ws")}
	for k, v := range extra {
		ic[k] = v
	}
	msgs := []any{}
	if text != "" {
		msgs = append(msgs, map[string]any{"id": "m-" + run, "role": "user", "content": text})
	}
	b := map[string]any{
		"threadId": thread, "runId": run, "state": map[string]any{}, "messages": msgs, "tools": []any{}, "context": []any{},
		"forwardedProps": map[string]any{"iacCode": ic},
	}
	if resume != nil {
		b["resume"] = resume
	}
	return b
}

type answer struct {
	status int
	code   string
	header http.Header
	events []map[string]any
}

func (a answer) last() map[string]any {
	if len(a.events) == 0 {
		return nil
	}
	return a.events[len(a.events)-1]
}

func post(t *testing.T, url string, body any) answer {
	t.Helper()
	raw, _ := json.Marshal(body)
	res, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	a := answer{status: res.StatusCode, header: res.Header}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		var e struct{ Error struct{ Code string } }
		_ = json.NewDecoder(res.Body).Decode(&e)
		a.code = e.Error.Code
		return a
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev map[string]any
			if err := json.Unmarshal([]byte(d), &ev); err != nil {
				t.Fatal(err)
			}
			a.events = append(a.events, ev)
		}
	}
	return a
}

func interruptID(t *testing.T, a answer) string {
	t.Helper()
	out, _ := a.last()["outcome"].(map[string]any)
	its, _ := out["interrupts"].([]any)
	if a.last()["type"] != "RUN_FINISHED" || len(its) == 0 {
		t.Fatalf("no interrupt: %d %s %v", a.status, a.code, a.last())
	}
	return its[0].(map[string]any)["id"].(string)
}

func allow(id string) []map[string]any {
	return []map[string]any{{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}}
}

func success(a answer) bool {
	out, _ := a.last()["outcome"].(map[string]any)
	return a.last()["type"] == "RUN_FINISHED" && out["type"] == "success"
}

// TestAnyReplicaServesAnyThread: three replicas over one Redis. A
// permission raised through A is resumed through B (forwarded to A, whose
// A2A server holds the task); a second run of a thread streaming on A is
// THREAD_BUSY whichever replica it reaches; a cancel sent to C stops a run
// streaming from A; a replay gets DUPLICATE_RUN_ID everywhere.
func TestAnyReplicaServesAnyThread(t *testing.T) {
	f := newFleet(t, 5*time.Second)
	a, b, c := f.start(t, true), f.start(t, true), f.start(t, true)

	id := interruptID(t, post(t, a.url, f.body("thread-p", "run-1", "permission", nil)))
	if r := post(t, b.url, f.body("thread-p", "run-2", "", allow(id))); !success(r) {
		t.Fatalf("resume through B: %d %s %v", r.status, r.code, r.last())
	}
	for _, rep := range []*replica{a, b, c} {
		if r := post(t, rep.url, f.body("thread-p", "run-2", "", allow(id))); r.status != 409 || r.code != "DUPLICATE_RUN_ID" {
			t.Fatalf("replay: %d %s", r.status, r.code)
		}
	}

	// A long run on A; its session event gives the execution id.
	raw, _ := json.Marshal(f.body("thread-c", "run-1", "cancel me", nil))
	res, err := http.Post(a.url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var execID string
	sc := bufio.NewScanner(res.Body)
	for execID == "" && sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, "iac-code.session.v1") {
			var ev struct{ Value struct{ ExecutionID string } }
			_ = json.Unmarshal([]byte(d), &ev)
			execID = ev.Value.ExecutionID
		}
	}
	for _, rep := range []*replica{b, c} {
		if r := post(t, rep.url, f.body("thread-c", "run-2", "again", nil)); r.status != 409 || r.code != "THREAD_BUSY" {
			t.Fatalf("second run through another replica: %d %s", r.status, r.code)
		}
	}
	cres, err := http.Post(c.url+"extensions/iac-code/v1/executions/"+execID+"/cancel", "application/json",
		strings.NewReader(`{"threadId":"thread-c","rosInvocationId":"inv-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	var cancelled struct{ Status string }
	_ = json.NewDecoder(cres.Body).Decode(&cancelled)
	cres.Body.Close()
	if cres.StatusCode != 200 || cancelled.Status != "cancelled" {
		t.Fatalf("cancel through C: %d %+v", cres.StatusCode, cancelled)
	}
	var lastLine string
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			lastLine = d
		}
	}
	if !strings.Contains(lastLine, `"RUN_ERROR"`) || !strings.Contains(lastLine, `"CANCELLED"`) {
		t.Fatalf("the run on A did not end CANCELLED: %s", lastLine)
	}
}

// TestOwnerKilled: the owner dies with a permission pending. Until its
// lease lapses a request gets the retryable 503 OWNER_UNAVAILABLE with
// Retry-After, never a hang; then another replica takes the thread and the
// normal-mode wait, which lived in the dead replica's A2A server, ends
// EXECUTION_LOST, exactly as after a restart.
func TestOwnerKilled(t *testing.T) {
	f := newFleet(t, 1500*time.Millisecond)
	a, b := f.start(t, false), f.start(t, true)
	id := interruptID(t, post(t, a.url, f.body("thread-k", "run-1", "permission", nil)))
	a.kill()
	r := post(t, b.url, f.body("thread-k", "run-2", "", allow(id)))
	if r.status != 503 || r.code != "OWNER_UNAVAILABLE" || r.header.Get("Retry-After") == "" {
		t.Fatalf("while the dead owner's lease lasts: %d %s %q", r.status, r.code, r.header.Get("Retry-After"))
	}
	f.waitLeaseGone(t, "thread-k", 5*f.ttl)
	r = post(t, b.url, f.body("thread-k", "run-3", "", allow(id)))
	if r.last()["type"] != "RUN_ERROR" || r.last()["code"] != "EXECUTION_LOST" {
		t.Fatalf("after the lease lapsed: %d %s %v", r.status, r.code, r.last())
	}
	// As after any lost execution, the pending interrupt stays (protocol.md
	// §5.6) until the execution is cancelled; then B serves new turns.
	rc, err := redisstore.Open(f.redisURL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	doc, _, err := redisstore.New(rc, f.prefix).Load(context.Background(), "thread-k")
	if err != nil {
		t.Fatal(err)
	}
	cres, err := http.Post(b.url+"extensions/iac-code/v1/executions/"+doc.Execution.ExecutionID+"/cancel", "application/json",
		strings.NewReader(`{"threadId":"thread-k","rosInvocationId":"inv-1"}`))
	if err != nil || cres.StatusCode != 200 {
		t.Fatalf("cancel of the lost execution: %v %v", cres, err)
	}
	cres.Body.Close()
	if r := post(t, b.url, f.body("thread-k", "run-4", "hello", nil)); !success(r) {
		t.Fatalf("new turn after the take-over: %d %s %v", r.status, r.code, r.last())
	}
}

// TestOwnerStopsGracefully: a replica that stops (SIGTERM) releases its
// leases first, so another replica serves its threads at once.
func TestOwnerStopsGracefully(t *testing.T) {
	f := newFleet(t, 30*time.Second)
	a, b := f.start(t, true), f.start(t, true)
	if r := post(t, a.url, f.body("thread-g", "run-1", "hello", nil)); !success(r) {
		t.Fatal("first turn")
	}
	id := interruptID(t, post(t, a.url, f.body("thread-g", "run-2", "permission", nil)))
	a.term(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if o, err := b.cl.Claim(context.Background(), "thread-g"); err == nil && o.Local {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stopped replica kept its lease")
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.kill()
	r := post(t, b.url, f.body("thread-g", "run-3", "", allow(id)))
	if r.last()["code"] != "EXECUTION_LOST" {
		t.Fatalf("resume after the owner stopped: %d %s %v", r.status, r.code, r.last())
	}
}

// TestConcurrentClaims: many replicas claiming one free thread at once
// get exactly one owner.
func TestConcurrentClaims(t *testing.T) {
	f := newFleet(t, 10*time.Second)
	rc, err := redisstore.Open(f.redisURL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var mu sync.Mutex
	owners := map[string]bool{}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		cl := cluster.New(cluster.Options{Client: rc, Prefix: f.prefix, AdvertiseURL: fmt.Sprintf("http://127.0.0.1:%d/", 9000+i), Token: "x"})
		wg.Go(func() {
			o, err := cl.Claim(context.Background(), "thread-race")
			if err != nil {
				t.Error(err)
				return
			}
			if o.Local {
				mu.Lock()
				owners[cl.ID()] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(owners) != 1 {
		t.Fatalf("%d owners", len(owners))
	}
}

// TestFencing: once another replica took a thread over, a write by the
// former owner (paused or cut off while its lease lapsed) is refused with
// ErrFenced and changes nothing; the new owner's writes go through.
func TestFencing(t *testing.T) {
	f := newFleet(t, 300*time.Millisecond)
	rc, err := redisstore.Open(f.redisURL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	store := redisstore.New(rc, f.prefix)
	old := cluster.New(cluster.Options{Client: rc, Prefix: f.prefix, AdvertiseURL: "http://127.0.0.1:1/", Token: "x", TTL: f.ttl})
	next := cluster.New(cluster.Options{Client: rc, Prefix: f.prefix, AdvertiseURL: "http://127.0.0.1:2/", Token: "x", TTL: f.ttl})
	o1, err := old.Claim(context.Background(), "thread-f")
	if err != nil || !o1.Local || !o1.Acquired {
		t.Fatalf("first claim: %+v %v", o1, err)
	}
	rev, err := store.Save(state.WithLease(context.Background(), o1.Lease), storetest.Thread("thread-f"), state.NoRevision)
	if err != nil {
		t.Fatal(err)
	}
	f.waitLeaseGone(t, "thread-f", 10*time.Second)
	o2, err := next.Claim(context.Background(), "thread-f")
	if err != nil || !o2.Local || o2.Lease == o1.Lease {
		t.Fatalf("take-over: %+v %v", o2, err)
	}
	stale := storetest.Thread("thread-f")
	stale.RunDigests["from-the-old-owner"] = "x"
	if _, err := store.Save(state.WithLease(context.Background(), o1.Lease), stale, rev); !errors.Is(err, state.ErrFenced) {
		t.Fatalf("write by the former owner: %v, want ErrFenced", err)
	}
	fresh := storetest.Thread("thread-f")
	fresh.RunDigests["from-the-new-owner"] = "y"
	if _, err := store.Save(state.WithLease(context.Background(), o2.Lease), fresh, rev); err != nil {
		t.Fatalf("write by the new owner: %v", err)
	}
	doc, _, err := store.Load(context.Background(), "thread-f")
	if err != nil || doc.RunDigests["from-the-old-owner"] != "" || doc.RunDigests["from-the-new-owner"] != "y" {
		t.Fatalf("stored %v %v", doc.RunDigests, err)
	}
}

// TestPipelineSurvivesOwnerDeath: a pipeline question raised on A; A dies
// (SIGKILL). Once its lease lapses, B takes the thread, its agent restores
// the session from the shared backup, and the answer completes the
// pipeline there.
func TestPipelineSurvivesOwnerDeath(t *testing.T) {
	f := newFleet(t, 1500*time.Millisecond)
	a, b := f.start(t, false), f.start(t, true)
	pipeline := map[string]any{"runMode": "pipeline"}
	first := post(t, a.url, f.bodyWith("thread-q", "run-1", "Plan a deployment and ask me a question", nil, pipeline))
	id := interruptID(t, first)
	out, _ := first.last()["outcome"].(map[string]any)
	it := out["interrupts"].([]any)[0].(map[string]any)
	meta, _ := it["metadata"].(map[string]any)
	opts, _ := meta["standardOptions"].([]any)
	if len(opts) == 0 {
		t.Fatalf("question without options: %v", it)
	}
	choice := opts[0].(map[string]any)["id"]
	a.kill()
	f.waitLeaseGone(t, "thread-q", 5*f.ttl)
	r := post(t, b.url, f.bodyWith("thread-q", "run-2", "", []map[string]any{{"interruptId": id, "status": "resolved", "payload": map[string]any{"selectedId": choice}}}, pipeline))
	if !success(r) {
		t.Fatalf("the pipeline did not continue on B: %d %s %v", r.status, r.code, r.last())
	}
}

// TestFiftyWritersAcrossReplicas: fifty new turns of one thread sent at
// once to three replicas. Each is admitted (and runs) or refused
// THREAD_BUSY by the owner; every admitted run id is in the stored
// document, and the document's revision history is a gap-free chain: no
// replica lost another's update.
func TestFiftyWritersAcrossReplicas(t *testing.T) {
	f := newFleet(t, 10*time.Second)
	reps := []*replica{f.start(t, true), f.start(t, true), f.start(t, true)}
	if r := post(t, reps[0].url, f.body("thread-50", "run-0", "hello", nil)); !success(r) {
		t.Fatal("first turn")
	}
	var mu sync.Mutex
	admitted := []string{"run-0"}
	var wg sync.WaitGroup
	for i := 1; i <= 50; i++ {
		wg.Go(func() {
			run := fmt.Sprintf("run-%d", i)
			r := post(t, reps[i%3].url, f.body("thread-50", run, "hello", nil))
			switch {
			case r.status == 200:
				mu.Lock()
				admitted = append(admitted, run)
				mu.Unlock()
			case r.status == 409 && r.code == "THREAD_BUSY":
			default:
				t.Errorf("%s: %d %s", run, r.status, r.code)
			}
		})
	}
	wg.Wait()
	rc, err := redisstore.Open(f.redisURL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	store := redisstore.New(rc, f.prefix)
	doc, _, err := store.Load(context.Background(), "thread-50")
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range admitted {
		if doc.RunDigests[run] == "" {
			t.Fatalf("admitted %s is not stored", run)
		}
	}
	if len(doc.RunDigests) != len(admitted) {
		t.Fatalf("%d runs stored, %d admitted", len(doc.RunDigests), len(admitted))
	}
	h, err := store.History(context.Background(), "thread-50")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(h); i++ {
		if h[i][0] != h[i-1][1] {
			t.Fatalf("revision %d was saved over %s, not over %s", i, h[i][0], h[i-1][1])
		}
	}
	t.Logf("%d of 51 turns admitted, %d revisions", len(admitted), len(h))
}
