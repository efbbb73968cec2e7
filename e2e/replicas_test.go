package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
)

// startReplicas starts n real binaries, each with its own embedded agent,
// sharing one Redis store, a replica token, a session backup directory and
// a workspace root.
func startReplicas(t *testing.T, n int, leaseTTL string) []*Server {
	t.Helper()
	url := redistest.URL(t)
	prefix := fmt.Sprintf("e2e-%d:", time.Now().UnixNano())
	root := t.TempDir()
	backup := t.TempDir() // the agents' shared session backup
	var out []*Server
	ports := make([]int, n)
	urls := make([]string, n)
	for i := range ports {
		ports[i] = e2etest.FreePort(t)
		urls[i] = "http://127.0.0.1:" + strconv.Itoa(ports[i]) + "/"
	}
	for i, port := range ports {
		s := startServerOn(t, port, root, []string{"--demo", "--advertise-url", urls[i], "--replica-urls", strings.Join(urls, ","), "--lease-ttl", leaseTTL},
			"IAC_CODE_AGUI_STATE_STORE="+url, "IAC_CODE_AGUI_REDIS_KEY_PREFIX="+prefix, "IAC_CODE_AGUI_REPLICA_TOKEN=e2e-replicas",
			"IAC_CODE_CONFIG_BACKUP_DIR="+backup)
		out = append(out, s)
	}
	return out
}

// TestReplicasWithOfficialClient runs replicas.mjs: the official client
// against three replicas, a replica chosen at random for every request.
func TestReplicasWithOfficialClient(t *testing.T) {
	ensureClient(t)
	reps := startReplicas(t, 3, "15")
	urls := make([]string, len(reps))
	for i, r := range reps {
		urls[i] = r.URL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "replicas.mjs")
	cmd.Env = append(os.Environ(), "AGUI_URLS="+strings.Join(urls, ","), "AGUI_CWD="+filepath.Join(reps[0].Root, "workspace"))
	out, err := cmd.CombinedOutput()
	passed := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			Name  string `json:"name"`
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Name == "" {
			continue
		}
		if r.OK {
			passed++
		} else {
			t.Errorf("scenario %s: %s", r.Name, r.Error)
		}
	}
	if err != nil || passed != 2 {
		t.Fatalf("harness: %v (%d passed)\n%s", err, passed, out)
	}
}

// TestReplicaKilled: SIGKILL on the owner while a permission waits. A
// request in between gets 503 OWNER_UNAVAILABLE with Retry-After, never a
// hang; after the lease lapses another replica serves the resume, and the
// normal-mode wait (which lived in the dead replica's agent) ends
// EXECUTION_LOST.
func TestReplicaKilled(t *testing.T) {
	reps := startReplicas(t, 2, "2")
	a, b := reps[0], reps[1]
	body := func(run, text string, resume any) []byte {
		m := map[string]any{"threadId": "thread-kill", "runId": run, "state": map[string]any{}, "tools": []any{}, "context": []any{},
			"messages": []any{}, "forwardedProps": map[string]any{"iacCode": map[string]any{"schemaVersion": 1, "rosInvocationId": "inv-1", "cwd": filepath.Join(a.Root, "ws")}}}
		if text != "" {
			m["messages"] = []any{map[string]any{"id": "m-" + run, "role": "user", "content": text}}
		}
		if resume != nil {
			m["resume"] = resume
		}
		raw, _ := json.Marshal(m)
		return raw
	}
	first := postRaw(t, a.URL, body("run-1", "permission", nil))
	if !strings.Contains(first.body, `"type":"interrupt"`) {
		t.Fatalf("no interrupt: %s", first.body)
	}
	id := between(first.body, `"interrupts":[{"id":"`, `"`)
	a.Kill()
	resume := []any{map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}}
	r := postRaw(t, b.URL, body("run-2", "", resume))
	if r.status != 503 || !strings.Contains(r.body, "OWNER_UNAVAILABLE") || r.retryAfter == "" {
		t.Fatalf("while the dead owner's lease lasts: %d %q %s", r.status, r.retryAfter, r.body)
	}
	// Once the lease lapses (2 s), b takes the thread; a refusal has no
	// effect, so asking again until then is safe.
	for i, deadline := 3, time.Now().Add(30*time.Second); r.status == 503 && strings.Contains(r.body, "OWNER_UNAVAILABLE"); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("the dead owner's lease never lapsed: %d %s", r.status, r.body)
		}
		time.Sleep(100 * time.Millisecond)
		r = postRaw(t, b.URL, body(fmt.Sprintf("run-%d", i), "", resume))
	}
	if !strings.Contains(r.body, `"code":"EXECUTION_LOST"`) {
		t.Fatalf("after the lease lapsed: %d %s", r.status, r.body)
	}
}

type rawAnswer struct {
	status     int
	retryAfter string
	body       string
}

func postRaw(t *testing.T, url string, body []byte) rawAnswer {
	t.Helper()
	res, err := httpPost(url, body)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i+len(start):]
	if j := strings.Index(s, end); j >= 0 {
		return s[:j]
	}
	return s
}

func httpPost(url string, body []byte) (rawAnswer, error) {
	res, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return rawAnswer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return rawAnswer{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After"), body: string(b)}, err
}
