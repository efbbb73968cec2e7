package scaleout

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/redis/go-redis/v9"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
)

// fleet is three (or n) replicas of the real binary sharing one Redis,
// each through its own toxiproxy listener, and one demo agent process,
// each through its own recording front.
type fleet struct {
	t      *testing.T
	h      *history
	ttl    string // --lease-ttl, seconds
	prefix string
	root   string // the allowed workspace root
	cwd    string
	rc     redis.UniversalClient // straight to Redis, for the test's checks
	x      *toxi
	reps   []*replica
	client *http.Client
}

// replica is one replica's port, links and process (the current
// incarnation; restart starts a new one on the same port).
type replica struct {
	i        int
	url      string
	port     int
	proxy    *toxiclient.Proxy // its link to Redis
	store    string            // its --state-store URL (through proxy)
	front    string            // its --a2a-url
	stateDir string
	out      *e2etest.Buffer // every incarnation's output

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

const replicaToken = "scaleout-replicas"

// newFleet starts n replicas with the given --lease-ttl and waits until
// each answers /health; its clients give up a replica that sends no
// headers within headerTimeout (0: never). They are stopped (SIGTERM, then SIGKILL) when the
// test ends, before the fronts, the agent and toxiproxy.
func newFleet(t *testing.T, n int, ttl string, headerTimeout time.Duration) *fleet {
	t.Helper()
	redisURL := redistest.URL(t)
	u, err := url.Parse(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := redisstore.Open(redisURL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{t: t, h: &history{}, ttl: ttl, prefix: fmt.Sprintf("scaleout-%d:", time.Now().UnixNano()), root: root,
		cwd: filepath.Join(root, "ws"), rc: rc, x: startToxiproxy(t), client: newHTTPClient(headerTimeout)}
	agent := startAgent(t)
	urls := make([]string, n)
	for i := range n {
		port := e2etest.FreePort(t)
		urls[i] = "http://127.0.0.1:" + strconv.Itoa(port) + "/"
		p := f.x.proxy(t, fmt.Sprintf("redis-%d", i), u.Host)
		store := *u
		store.Host = p.Listen
		f.reps = append(f.reps, &replica{i: i, url: urls[i], port: port, proxy: p, store: store.String(),
			front: f.h.front(t, i, agent), stateDir: t.TempDir(), out: &e2etest.Buffer{}})
	}
	t.Cleanup(func() {
		// Whatever a failed test left on the links, the replicas hand
		// their threads over through healthy ones.
		_ = f.x.client.ResetState()
		var wg sync.WaitGroup
		for _, r := range f.reps {
			wg.Go(func() { r.stop(t, 20*time.Second) })
		}
		wg.Wait()
		f.client.CloseIdleConnections()
		// IAC_CODE_AGUI_SCALEOUT_LOGS names a directory for the replicas'
		// whole output.
		if dir := os.Getenv("IAC_CODE_AGUI_SCALEOUT_LOGS"); dir != "" {
			for _, r := range f.reps {
				_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-replica-%d.log", t.Name(), r.i)), []byte(r.out.String()), 0o600)
			}
		}
		if t.Failed() {
			for _, r := range f.reps {
				t.Logf("replica %d output (tail):\n%s", r.i, tail(r.out.String(), 6000))
			}
		}
	})
	for _, r := range f.reps {
		f.start(r, urls)
	}
	return f
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// urls are the replicas' base URLs.
func (f *fleet) urls() []string {
	out := make([]string, len(f.reps))
	for i, r := range f.reps {
		out[i] = r.url
	}
	return out
}

// start starts a new incarnation of r and waits for its /health.
func (f *fleet) start(r *replica, urls []string) {
	t := f.t
	t.Helper()
	cmd := exec.Command(binary, "--port", strconv.Itoa(r.port), "--state-dir", r.stateDir, "--log-format", "json",
		"--a2a-url", r.front, "--state-store", r.store, "--redis-key-prefix", f.prefix,
		"--advertise-url", r.url, "--replica-urls", strings.Join(urls, ","), "--lease-ttl", f.ttl)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + r.stateDir, "IAC_CODE_AGUI_ALLOWED_CWDS=" + f.root,
		"IAC_CODE_AGUI_A2A_TOKEN=agent-token", "IAC_CODE_AGUI_REPLICA_TOKEN=" + replicaToken}
	fmt.Fprintf(r.out, "== start %s\n", time.Now().Format(timeFmt))
	cmd.Stdout, cmd.Stderr = r.out, r.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	r.mu.Lock()
	r.cmd, r.done = cmd, done
	r.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(r.url + "health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		select {
		case <-done:
			t.Fatalf("replica %d exited during its start:\n%s", r.i, tail(r.out.String(), 4000))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %d not ready:\n%s", r.i, tail(r.out.String(), 4000))
		}
	}
}

// stop sends SIGTERM and waits for the exit; after within, SIGKILL. It
// returns how long the exit took and the exit code (-1 when killed).
func (r *replica) stop(t testing.TB, within time.Duration) (time.Duration, int) {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.mu.Unlock()
	if cmd == nil {
		return 0, 0
	}
	select {
	case <-done:
		return 0, cmd.ProcessState.ExitCode()
	default:
	}
	start := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(within):
		t.Errorf("replica %d did not exit within %v of SIGTERM", r.i, within)
		_ = cmd.Process.Kill()
		<-done
		return time.Since(start), -1
	}
	return time.Since(start), cmd.ProcessState.ExitCode()
}

// restart stops r gracefully (SIGTERM, wait for the exit) and starts it
// again on the same port; it returns how long the old process took to
// exit and how long the replica was down in all.
func (f *fleet) restart(r *replica) (exit, down time.Duration) {
	f.t.Helper()
	start := time.Now()
	exit, code := r.stop(f.t, 30*time.Second)
	if code != 0 {
		f.t.Errorf("replica %d exited with code %d after SIGTERM", r.i, code)
	}
	f.start(r, f.urls())
	return exit, time.Since(start)
}

// startAgent runs the demo agent as its own process, shared by the
// replicas (through their fronts), so that it outlives their restarts.
func startAgent(t *testing.T) string {
	t.Helper()
	port := e2etest.FreePort(t)
	cmd := exec.Command(binary, "demo-agent", "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "IACCODE_A2A_HTTP_TOKEN=agent-token"}
	out := &e2etest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("demo agent output (tail):\n%s", tail(out.String(), 3000))
		}
	})
	u := fmt.Sprintf("http://127.0.0.1:%d/", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		req, _ := http.NewRequest(http.MethodGet, u+"health", nil)
		req.Header.Set("Authorization", "Bearer agent-token")
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return u
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("demo agent not ready:\n%s", out.String())
		}
		select {
		case <-done:
			t.Fatalf("demo agent exited:\n%s", out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// warnings counts the replica's log lines above info level by message.
func (r *replica) warnings() map[string]int {
	n := map[string]int{}
	for line := range strings.SplitSeq(r.out.String(), "\n") {
		var l struct{ Level, Msg, Error, Detail string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Level != "" && l.Level != "INFO" && l.Level != "DEBUG" {
			n[l.Level+" "+l.Msg]++
		}
	}
	return n
}

// keys of a thread in Redis.
func (f *fleet) keys(threadID string) (owner, doc string) {
	owner, doc, err := redisstore.LeaseKeys(f.prefix, threadID)
	if err != nil {
		f.t.Fatal(err)
	}
	return owner, doc
}

// docState is what a thread's hash holds: its revision, fencing counter
// and the runs its document records.
type docState struct {
	rev, fence int
	runs       int
}

func (f *fleet) docState(ctx context.Context, threadID string) (docState, error) {
	_, doc := f.keys(threadID)
	v, err := f.rc.HMGet(ctx, doc, "rev", "fence").Result()
	if err != nil {
		return docState{}, err
	}
	var s docState
	if r, ok := v[0].(string); ok {
		s.rev, _ = strconv.Atoi(r)
	}
	if r, ok := v[1].(string); ok {
		s.fence, _ = strconv.Atoi(r)
	}
	t, _, err := redisstore.New(f.rc, f.prefix).Load(ctx, threadID)
	if err == nil {
		s.runs = len(t.RunDigests)
	}
	return s, nil
}
