package reliability

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent/demoagenttest"
)

// mountTmpfs mounts a small tmpfs at a new directory, or skips the test
// where the machine does not allow it (not root, no mount).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); the disk-fault suite needs root and mount", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// cancelsOf counts the CancelTask calls for a task at the agent.
func cancelsOf(a *demoagenttest.Server, taskID string) int {
	n := 0
	for _, c := range a.Calls() {
		if c.Method == "CancelTask" && c.TaskID == taskID {
			n++
		}
	}
	return n
}

// TestDiskFaults: a state directory that becomes full (a 256 KiB tmpfs
// filled up) and then read-only (a read-only bind mount over it): the resume whose accepted
// answer cannot be committed ends STATE_PERSISTENCE_FAILED and its A2A
// task is cancelled; a new thread is refused 503 STATE_UNAVAILABLE; the
// server keeps serving, and once the fault is gone every thread works
// again.
func TestDiskFaults(t *testing.T) {
	stateDir := mountTmpfs(t, "256k")
	agent := startAgent(t, demoagent.Options{StepDelay: 50 * time.Millisecond})
	// Between the adapter and the agent: the fault starts when the
	// answer leaves for the agent, after the resume's admission wrote
	// and before the agent's first frame makes the commit write that
	// must fail, however slow the machine is.
	var injectOnResume atomic.Pointer[func()]
	target, err := url.Parse(agent.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if bytes.Contains(body, []byte(`"agui-resume-`)) {
			if inject := injectOnResume.Swap(nil); inject != nil {
				(*inject)()
			}
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(gate.Close)
	s := startServer(t, serverOpts{stateDir: stateDir, agentURL: gate.URL})
	cwd := filepath.Join(s.Root, "ws")
	if status, evs, body := post(t, s.URL, input("t-ok", "run-1", "hello", cwd, nil)); status != 200 || outcome(evs) != "success" {
		t.Fatalf("before the fault: %d %.300s", status, body)
	}
	filler := filepath.Join(stateDir, "filler")
	var bound atomic.Bool // the read-only bind mount is in place
	faults := []struct {
		name          string
		inject, clear func()
	}{
		{"full", func() {
			f, err := os.Create(filler)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = f.Write(make([]byte, 1<<20))
			f.Close()
		}, func() { _ = os.Remove(filler) }},
		{"read-only", func() {
			// A read-only bind mount over the directory makes every
			// path in it read-only to the server, as a kernel that
			// remounts the file system read-only on errors would.
			for _, args := range [][]string{{"--bind", stateDir, stateDir}, {"-o", "remount,bind,ro", stateDir}} {
				if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
					t.Errorf("mount %v: %v %s", args, err, out)
				}
			}
			bound.Store(true)
		}, func() {
			if !bound.Swap(false) {
				return
			}
			if out, err := exec.Command("umount", stateDir).CombinedOutput(); err != nil {
				t.Errorf("umount the read-only bind: %v %s", err, out)
			}
		}},
	}
	for i, f := range faults {
		thread := "t-disk-" + f.name
		status, evs, body := post(t, s.URL, input(thread, "run-1", "permission", cwd, nil))
		if status != 200 || outcome(evs) != "interrupt" {
			t.Fatalf("%s: interrupt before the fault: %d %.300s", f.name, status, body)
		}
		it := last(evs)["outcome"].(map[string]any)["interrupts"].([]any)[0].(map[string]any)
		task := it["metadata"].(map[string]any)["requestTaskId"].(string)
		start := time.Now()
		inject := f.inject
		injectOnResume.Store(&inject)
		// A failed check must not leave the fault behind (the bind
		// mount would keep the directory busy).
		t.Cleanup(f.clear)
		status, evs, body = post(t, s.URL, input(thread, "run-2", "", cwd, []any{map[string]any{"interruptId": it["id"], "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}}))
		if status != 200 || outcome(evs) != "error:STATE_PERSISTENCE_FAILED" || last(evs)["message"] != "The accepted interrupt response could not be committed." {
			t.Fatalf("%s: resume: %d %.600s", f.name, status, body)
		}
		if n := cancelsOf(agent, task); n != 1 {
			t.Fatalf("%s: %d CancelTask calls for the task, want 1", f.name, n)
		}
		status, _, body = post(t, s.URL, input("t-new-"+f.name, "run-1", "hello", cwd, nil))
		if status != 503 || errorCode(body) != "STATE_UNAVAILABLE" {
			t.Fatalf("%s: new thread: %d %s", f.name, status, body)
		}
		if res, err := client.Get(s.URL + "health"); err != nil || res.StatusCode != 200 {
			t.Fatalf("%s: /health during the fault: %v %v", f.name, res, err)
		} else {
			res.Body.Close()
		}
		t.Logf("%s: resume ended STATE_PERSISTENCE_FAILED and the task was cancelled; new thread 503; %v", f.name, time.Since(start).Round(time.Millisecond))
		f.clear()
		// The failed thread's best-effort write of its end failed too, so
		// its file still lists the interrupt: a resume of it is told the
		// truth (the task was cancelled), then the thread goes on.
		status, _, body = post(t, s.URL, input(thread, "run-3", "hello", cwd, nil))
		if status != 409 || errorCode(body) != "RESUME_REQUIRED" {
			t.Fatalf("%s cleared: the failed thread: %d %.300s", f.name, status, body)
		}
		status, evs, body = post(t, s.URL, input(thread, "run-4", "", cwd, []any{map[string]any{"interruptId": it["id"], "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}}))
		if status != 200 || outcome(evs) != "error:CANCELLED" {
			t.Fatalf("%s cleared: resume of the failed thread: %d %.600s", f.name, status, body)
		}
		// Everything works again: the new thread, the old one, the failed one.
		for _, th := range []string{"t-new-" + f.name, "t-ok", thread} {
			status, evs, body := post(t, s.URL, input(th, "run-after-"+f.name, "hello", cwd, nil))
			if status != 200 || outcome(evs) != "success" {
				t.Fatalf("%s cleared (%d): %s: %d %.600s", f.name, i, th, status, body)
			}
		}
	}
}
