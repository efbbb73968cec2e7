package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
)

// TestRedisRestartedMidRun: Redis (AOF, appendfsync always) is killed and
// restarted while a run streams. The run completes, nothing acknowledged
// before the crash is lost, a request while Redis is down gets 503
// STATE_UNAVAILABLE (never a fallback to files), and the thread works
// again once Redis is back.
func TestRedisRestartedMidRun(t *testing.T) {
	srv := redistest.Start(t, "always")
	f := newFleet(t, 5*time.Second)
	f.redisURL = srv.URL
	a := f.start(t, true)
	if r := post(t, a.url, f.body("thread-r", "run-1", "hello", nil)); !success(r) {
		t.Fatalf("first turn: %d %s %v", r.status, r.code, r.last())
	}

	raw, _ := json.Marshal(f.body("thread-r", "run-2", "slow", nil))
	res, err := http.Post(a.url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && !strings.Contains(sc.Text(), "TEXT_MESSAGE_CONTENT") {
	}
	srv.Kill()
	time.Sleep(300 * time.Millisecond)
	srv.Restart(t)
	var last string
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			last = d
		}
	}
	if !strings.Contains(last, `"RUN_FINISHED"`) || !strings.Contains(last, `"success"`) {
		t.Fatalf("the run across the Redis restart ended %s", last)
	}
	rc, err := redisstore.Open(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	store := redisstore.New(rc, f.prefix)
	doc, _, err := store.Load(context.Background(), "thread-r")
	if err != nil || doc.RunDigests["run-1"] == "" || doc.RunDigests["run-2"] == "" {
		t.Fatalf("after the restart: %v %v", doc, err)
	}

	srv.Kill()
	if r := post(t, a.url, f.body("thread-r", "run-3", "hello", nil)); r.status != 503 || r.code != "STATE_UNAVAILABLE" {
		t.Fatalf("while Redis is down: %d %s", r.status, r.code)
	}
	srv.Restart(t)
	if r := post(t, a.url, f.body("thread-r", "run-4", "hello", nil)); !success(r) {
		t.Fatalf("after Redis came back: %d %s %v", r.status, r.code, r.last())
	}
}
