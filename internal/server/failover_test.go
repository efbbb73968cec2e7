package server_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent/demoagenttest"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

// Failover between replicas: two adapters share the thread state
// directory, each in front of its own embedded agent, and the two agents
// share a session backup directory (docs/demo-agent.md, "Shared backup
// directory"). Adapter 1 and agent A handle run-1 and are stopped; adapter
// 2 and agent B take the resume.

// replica is one adapter over real loopback HTTP with its own agent.
type replica struct {
	env   *env
	agent *demoagenttest.Server
	http  *httptest.Server
}

func startReplica(t *testing.T, root, stateDir, backupDir string) *replica {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ag, err := demoagenttest.Start(ctx, "127.0.0.1:0", demoagent.Options{Token: "upstream-token", BackupDir: backupDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ag.Close() })
	ad := adapter.New(adapter.Options{
		Store:        filestore.New(stateDir),
		Upstream:     adapter.A2A(a2a.New(ag.URL, "upstream-token")),
		AllowedRoots: request.AllowedRoots([]string{root}),
	})
	srv := httptest.NewServer(server.New(server.Options{Adapter: ad, Version: "test"}))
	t.Cleanup(srv.Close)
	return &replica{env: &env{URL: srv.URL + "/", Root: root, StateDir: stateDir, Agent: ag, agentURL: ag.URL}, agent: ag, http: srv}
}

func (r *replica) stop() {
	r.http.Close()
	_ = r.agent.Close()
}

func failoverDirs(t *testing.T) (root, stateDir, backupDir string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root, t.TempDir(), filepath.Join(t.TempDir(), "backup")
}

// questionRun raises the question through from and answers it through to
// (the same replica when no failover happens); it returns the resume.
func questionRun(t *testing.T, from *replica, to func() *replica, th string) (*replica, *response) {
	t.Helper()
	pipe := map[string]any{"runMode": "pipeline"}
	it := interrupts(t, post(t, from.env.URL, from.env.body(th, "run-1", "ask me a question", pipe), nil))[0]
	r2 := to()
	b := resumeBody(r2.env, th, "run-2", map[string]any{"interruptId": it["id"], "status": "resolved", "payload": map[string]any{"selectedId": "vpc_ecs"}})
	b["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["runMode"] = "pipeline"
	return r2, post(t, r2.env.URL, b, nil)
}

// TestFailoverQuestionContinues: a pipeline question raised through
// replica 1 is answered through replica 2; ensure-restored brings the
// session back on agent B and the pipeline runs to its end there, with
// the same events as without the failover.
func TestFailoverQuestionContinues(t *testing.T) {
	root, stateDir, backupDir := failoverDirs(t)
	r1 := startReplica(t, root, stateDir, backupDir)
	r2, r := questionRun(t, r1, func() *replica {
		r1.stop()
		return startReplica(t, root, stateDir, backupDir)
	}, "thread-failover-question")
	fin := last(r.Events)
	if fin["type"] != "RUN_FINISHED" || fin["outcome"].(map[string]any)["type"] != "success" {
		t.Fatalf("resume through replica 2: %v %v", types(r.Events), fin)
	}
	assertBalanced(t, r.Events)
	// Agent B ran the rest: the answer reached it, and the completion
	// (sequence 6, after the 3 events journaled on A) came from it.
	var methods []string
	for _, c := range r2.agent.Calls() {
		methods = append(methods, c.Method)
	}
	if got := strings.Join(methods, ","); got != "GetTask,SendStreamingMessage" {
		t.Fatalf("agent B calls %s", got)
	}
	end := r.Events[len(r.Events)-2]
	if v, _ := end["value"].(map[string]any); end["type"] != "CUSTOM" || v["eventType"] != "pipeline_completed" || v["sequence"] != 6.0 {
		t.Fatalf("before RUN_FINISHED: %v", end)
	}

	// The same resume on one replica, without failover.
	solo := startReplica(t, root, t.TempDir(), "")
	_, ref := questionRun(t, solo, func() *replica { return solo }, "thread-no-failover")
	if got, want := strings.Join(types(r.Events), ","), strings.Join(types(ref.Events), ","); got != want {
		t.Fatalf("events with failover\n%s\nwithout\n%s", got, want)
	}
}

// TestFailoverNormalPermissionLost: a normal-mode permission wait dies with
// agent A; replica 2 restores the session but not the task:
// EXECUTION_LOST.
func TestFailoverNormalPermissionLost(t *testing.T) {
	root, stateDir, backupDir := failoverDirs(t)
	const th = "thread-failover-permission"
	r1 := startReplica(t, root, stateDir, backupDir)
	it := interrupts(t, post(t, r1.env.URL, r1.env.body(th, "run-1", "permission", nil), nil))[0]
	r1.stop()

	r2 := startReplica(t, root, stateDir, backupDir)
	r := post(t, r2.env.URL, resumeBody(r2.env, th, "run-2", allow(it["id"])), nil)
	if fin := last(r.Events); fin["code"] != "EXECUTION_LOST" || fin["message"] != "The A2A task to resume is unavailable." {
		t.Fatalf("got %v", fin)
	}
	// The session was restored (else the message would name the session);
	// GetTask found no task, and nothing was sent.
	var methods []string
	for _, c := range r2.agent.Calls() {
		methods = append(methods, c.Method)
	}
	if got := strings.Join(methods, ","); got != "GetTask" {
		t.Fatalf("agent B calls %s", got)
	}
}
