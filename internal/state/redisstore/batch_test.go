package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
	"github.com/iac-code-agui/iac-code-agui/internal/state/storetest"
)

// pipelineGate is a go-redis hook on the real server's client: it records
// the size of every pipeline of store commands and holds the first one until released, so a
// test can queue saves behind it deterministically. It does not change
// what is sent.
type pipelineGate struct {
	mu      sync.Mutex
	sizes   []int
	first   chan struct{} // closed to let the first pipeline go
	entered chan struct{} // closed when the first pipeline is held
}

func (g *pipelineGate) DialHook(next redis.DialHook) redis.DialHook { return next }
func (g *pipelineGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (g *pipelineGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		switch cmds[0].Name() {
		case "hello", "auth", "select", "client", "ping":
			return next(ctx, cmds) // a connection's set-up
		}
		g.mu.Lock()
		g.sizes = append(g.sizes, len(cmds))
		n := len(g.sizes)
		first, entered := g.first, g.entered
		g.mu.Unlock()
		if n == 1 {
			close(entered)
			<-first
		}
		return next(ctx, cmds)
	}
}

var _ redis.Hook = (*pipelineGate)(nil)

func (g *pipelineGate) pipelines() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return fmt.Sprint(g.sizes)
}

func gatedStore(t *testing.T) (*Store, *pipelineGate) {
	t.Helper()
	c, err := Open(redistest.URL(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	g := &pipelineGate{first: make(chan struct{}), entered: make(chan struct{})}
	c.AddHook(g)
	// The script is loaded first, so the counts below hold no NOSCRIPT
	// retry; TestBatchAfterScriptFlush covers that.
	if err := saveScript.Load(context.Background(), c).Err(); err != nil {
		t.Fatal(err)
	}
	return New(c, fmt.Sprintf("batch-%d:", time.Now().UnixNano())), g
}

// queued waits until n saves wait behind the held pipeline.
func queued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.batch.mu.Lock()
		got := len(s.batch.queue)
		s.batch.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d saves queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSavesQueueBehindAPipeline: while one save is in flight, 300 others
// queue; they go out as two pipelines (256 and 44), and every save gets
// its own answer: revision "1" for a new thread, a conflict for a stale
// revision.
func TestSavesQueueBehindAPipeline(t *testing.T) {
	s, g := gatedStore(t)
	ctx := context.Background()
	const n = 301
	errs := make([]error, n)
	revs := make([]state.Revision, n)
	var wg sync.WaitGroup
	save := func(i int) {
		defer wg.Done()
		prev := state.NoRevision
		if i%10 == 9 {
			prev = "7" // no such revision: a conflict
		}
		revs[i], errs[i] = s.Save(ctx, storetest.Thread(fmt.Sprintf("thread-%d", i)), prev)
	}
	wg.Add(1)
	go save(0)
	<-g.entered
	for i := 1; i < n; i++ {
		wg.Add(1)
		go save(i)
	}
	queued(t, s, n-1)
	close(g.first)
	wg.Wait()
	for i := range n {
		if i%10 == 9 {
			if err := errs[i]; !errors.Is(err, state.ErrConflict) {
				t.Errorf("save %d: %v, want ErrConflict", i, err)
			}
			continue
		}
		if errs[i] != nil || revs[i] != "1" {
			t.Errorf("save %d: revision %q, %v; want 1", i, revs[i], errs[i])
		}
	}
	if got, want := g.pipelines(), "[1 256 44]"; got != want {
		t.Fatalf("pipelines of %v, want %v", got, want)
	}
	if s.batch.busy || len(s.batch.queue) != 0 {
		t.Fatalf("batcher left busy=%v with %d queued", s.batch.busy, len(s.batch.queue))
	}
	// A later lone save goes out at once, as a pipeline of one.
	if _, err := s.Save(ctx, storetest.Thread("thread-late"), state.NoRevision); err != nil {
		t.Fatal(err)
	}
	if got, want := g.pipelines(), "[1 256 44 1]"; got != want {
		t.Fatalf("pipelines of %v, want %v", got, want)
	}
}

// TestLoadsAndSavesShareAPipeline: loads queued with saves go out in the
// same pipeline and each gets its own thread's answer.
func TestLoadsAndSavesShareAPipeline(t *testing.T) {
	s, g := gatedStore(t)
	ctx := context.Background()
	close(g.first) // let the set-up saves through; hold the next pipeline
	for i := range 50 {
		if _, err := s.Save(ctx, storetest.Thread(fmt.Sprintf("thread-%d", i)), state.NoRevision); err != nil {
			t.Fatal(err)
		}
	}
	hold := make(chan struct{})
	g.mu.Lock()
	g.sizes, g.first, g.entered = nil, hold, make(chan struct{})
	entered := g.entered
	g.mu.Unlock()
	var wg sync.WaitGroup
	loaded := make([]string, 50)
	saved := make([]error, 50)
	wg.Add(1)
	go func() { // the held pipeline: one save
		defer wg.Done()
		if _, err := s.Save(ctx, storetest.Thread("thread-first"), state.NoRevision); err != nil {
			t.Error(err)
		}
	}()
	<-entered
	for i := range 50 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			doc, rev, err := s.Load(ctx, fmt.Sprintf("thread-%d", i))
			if err == nil {
				loaded[i] = doc.ThreadID + "@" + string(rev)
			}
		}()
		go func() {
			defer wg.Done()
			doc := storetest.Thread(fmt.Sprintf("thread-%d", i))
			doc.RunDigests["run-x"] = "d"
			_, saved[i] = s.Save(ctx, doc, "7") // stale: a conflict
		}()
	}
	queued(t, s, 100)
	close(hold)
	wg.Wait()
	for i := range 50 {
		if want := fmt.Sprintf("thread-%d@1", i); loaded[i] != want {
			t.Errorf("load %d: %q, want %q", i, loaded[i], want)
		}
		if !errors.Is(saved[i], state.ErrConflict) {
			t.Errorf("save %d: %v, want ErrConflict", i, saved[i])
		}
	}
	if got, want := g.pipelines(), "[1 100]"; got != want {
		t.Fatalf("pipelines of %v, want %v", got, want)
	}
}

// TestBatchAfterScriptFlush: a server that lost its scripts (restart,
// SCRIPT FLUSH) still takes a batch of saves; the text is sent once more.
func TestBatchAfterScriptFlush(t *testing.T) {
	c, err := Open(redistest.URL(t), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := New(c, fmt.Sprintf("flush-%d:", time.Now().UnixNano()))
	ctx := context.Background()
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Save(ctx, storetest.Thread(fmt.Sprintf("thread-%d", i)), state.NoRevision)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("save %d: %v", i, err)
		}
	}
}

// TestBatchUnavailable: when the connection fails under a batch, every
// save in it answers ErrUnavailable and the next save is tried afresh.
func TestBatchUnavailable(t *testing.T) {
	srv := redistest.Start(t, "everysec")
	c, err := Open(srv.URL+"?max_retries=-1&dial_timeout=200ms", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := New(c, "down:")
	ctx := context.Background()
	if _, err := s.Save(ctx, storetest.Thread("thread-a"), state.NoRevision); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Save(ctx, storetest.Thread(fmt.Sprintf("thread-b%d", i)), state.NoRevision)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if !isUnavailable(err) {
			t.Errorf("save %d: %v, want ErrUnavailable", i, err)
		}
	}
	srv.Restart(t)
	if rev, err := s.Save(ctx, storetest.Thread("thread-c"), state.NoRevision); err != nil || rev != "1" {
		t.Fatalf("save after restart: %q %v, want revision 1", rev, err)
	}
}

func isUnavailable(err error) bool { return errors.Is(err, state.ErrUnavailable) }

// panicHook panics in every pipeline of store commands: go-redis does not
// panic there on its own, so the fault is injected.
type panicHook struct{}

func (panicHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (panicHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (panicHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		switch cmds[0].Name() {
		case "hello", "auth", "select", "client", "ping":
			return next(ctx, cmds)
		}
		panic("pipeline exploded")
	}
}

// TestPipelinePanicEndsTheProcess: a panic while a caller sends a pipeline
// for others is not swallowed by net/http's recovery of a handler (which
// would leave the batcher busy and every later command waiting): the
// process dies with it. The child is this test binary serving one request.
func TestPipelinePanicEndsTheProcess(t *testing.T) {
	if os.Getenv("REDISSTORE_PANIC_CHILD") != "" {
		pipelinePanicChild(t, os.Getenv("REDISSTORE_PANIC_CHILD"))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPipelinePanicEndsTheProcess$")
	cmd.Env = append(os.Environ(), "REDISSTORE_PANIC_CHILD="+redistest.URL(t))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("child ended with %v, want exit status 2 (panic):\n%s", err, out)
	}
	if !strings.Contains(string(out), "panic: redisstore: pipeline: pipeline exploded") {
		t.Fatalf("child output lacks the pipeline's panic:\n%s", out)
	}
}

func pipelinePanicChild(t *testing.T, url string) {
	c, err := Open(url, "")
	if err != nil {
		t.Fatal(err)
	}
	c.AddHook(panicHook{})
	s := New(c, fmt.Sprintf("panic-%d:", time.Now().UnixNano()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _, _ = s.Load(r.Context(), "thread-1")
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
	}
	time.Sleep(5 * time.Second) // the process is gone before this ends
	t.Fatal("the process survived the pipeline's panic")
}

// twiceHook runs every pipeline twice, as go-redis does when the
// connection breaks after Redis ran the pipeline but before its answers
// were read: the whole pipeline is sent again.
type twiceHook struct{}

func (twiceHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (twiceHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (twiceHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		switch cmds[0].Name() {
		case "hello", "auth", "select", "client", "ping":
			return next(ctx, cmds)
		}
		if err := next(ctx, cmds); err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}

// TestSaveSentTwiceIsOneSave: a save whose pipeline is sent again after
// it ran (its answer lost with the connection) answers success with the
// revision it wrote, not a conflict (which would make the writer re-apply
// a change already stored: a new run answered DUPLICATE_RUN_ID), and it
// is stored and logged once. A stale save sent twice is still a conflict.
func TestSaveSentTwiceIsOneSave(t *testing.T) {
	c, err := Open(redistest.URL(t), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.AddHook(twiceHook{})
	ctx := context.Background()
	if err := saveScript.Load(ctx, c).Err(); err != nil {
		t.Fatal(err)
	}
	s := New(c, fmt.Sprintf("twice-%d:", time.Now().UnixNano()))
	th := storetest.Thread("thread-twice")
	rev, err := s.Save(ctx, th, state.NoRevision)
	if err != nil || rev != "1" {
		t.Fatalf("first save sent twice: %q %v", rev, err)
	}
	th.RunDigests["run-2"] = "d"
	rev, err = s.Save(ctx, th, rev)
	if err != nil || rev != "2" {
		t.Fatalf("second save sent twice: %q %v", rev, err)
	}
	if _, err := s.Save(ctx, th, "1"); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("stale save sent twice: %v, want a conflict", err)
	}
	h, err := s.History(ctx, "thread-twice")
	if err != nil || len(h) != 2 {
		t.Fatalf("history %v %v, want two saves", h, err)
	}
}
