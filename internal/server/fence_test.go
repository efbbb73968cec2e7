package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/fence"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
)

// The writer fence of protocol.md §8.9, on the adapter in front of the
// embedded agent.

var ownerA = map[string]any{"sandboxId": "sb-a", "activationId": "act-a", "runId": "run-a", "leaseId": "lease-a"}

func fenced(owner map[string]any) map[string]any {
	return map[string]any{"executionFence": map[string]any{"version": "session-handoff-v1", "owner": owner}}
}

// moveEpoch writes the thread's barrier as another process' hand-over
// leaves it: active for owner, the writer counter one further.
func moveEpoch(t *testing.T, f *fence.Fence, threadID string, owner map[string]any) {
	t.Helper()
	o, err := fence.CanonicalOwner(owner)
	if err != nil {
		t.Fatal(err)
	}
	e, err := f.Epoch(fence.ThreadKey(threadID))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(fence.ThreadKey(threadID)))
	raw, _ := json.Marshal(map[string]any{"phase": "ACTIVE", "epoch": 1, "writerCounter": e + 1, "operations": map[string]any{},
		"migrationId": "m-1", "commitId": "commit-1", "targetOwner": o})
	if err := os.WriteFile(filepath.Join(f.Root(), hex.EncodeToString(sum[:])+".json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFenceAdmissionNeedsOwner: with the fence on, an admission without a
// physical execution owner, or with another owner than the bound one, is
// 400 INVALID_INPUT; the bound owner is admitted and its saves pass.
func TestFenceAdmissionNeedsOwner(t *testing.T) {
	f := fence.New(filepath.Join(t.TempDir(), "handoff-control"))
	e := newEnv(t, envOptions{fence: f})
	for name, iac := range map[string]map[string]any{
		"no fence":       nil,
		"no owner":       {"executionFence": map[string]any{"version": "session-handoff-v1"}},
		"partial owner":  fenced(map[string]any{"sandboxId": "sb-a", "runId": "run-a"}),
		"owner not JSON": {"executionFence": map[string]any{"owner": "sb-a"}},
	} {
		r := post(t, e.URL, e.body("thread-f", "run-"+name, "Create a VPC", iac), nil)
		var body struct {
			Error struct{ Code, Message, Field string }
		}
		_ = json.Unmarshal(r.Body, &body)
		if r.Status != 400 || body.Error.Code != "INVALID_INPUT" || body.Error.Message != "Invalid iac-code forwarded properties." ||
			body.Error.Field != "/forwardedProps/iacCode/executionFence/owner" {
			t.Fatalf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	if _, err := os.Stat(filepath.Join(e.StateDir, "threads", "thread-f.json")); !os.IsNotExist(err) {
		t.Fatalf("a refused admission wrote the thread: %v", err)
	}
	assertSuccess(t, post(t, e.URL, e.body("thread-f", "run-1", "Create a VPC", fenced(ownerA)), nil))
	other := map[string]any{"sandboxId": "sb-x", "activationId": "act-x", "runId": "run-x", "leaseId": "lease-x"}
	if r := post(t, e.URL, e.body("thread-f", "run-2", "Create a VPC", fenced(other)), nil); r.Status != 400 {
		t.Fatalf("another owner: %d %s", r.Status, r.Body)
	}
	if o, _ := f.Owner(fence.ThreadKey("thread-f")); o["sandboxId"] != "sb-a" {
		t.Fatalf("bound owner %v", o)
	}
}

// TestFenceEpochMovedWithActiveRun: when the thread's epoch moves while a
// run of this process still streams on it, the next request of the thread
// is 503 STATE_UNAVAILABLE (not THREAD_BUSY), and the stale run can write
// nothing more.
func TestFenceEpochMovedWithActiveRun(t *testing.T) {
	f := fence.New(filepath.Join(t.TempDir(), "handoff-control"))
	e := newEnv(t, envOptions{fence: f})
	s := openStream(t, e.URL, e.body("thread-e", "run-1", "stall", fenced(ownerA)))
	s.waitFor(t, "CUSTOM") // the task is bound and saved
	moveEpoch(t, f, "thread-e", ownerA)
	r := post(t, e.URL, e.body("thread-e", "run-2", "Create a VPC", fenced(ownerA)), nil)
	if code, msg := errorOf(t, r); r.Status != 503 || code != "STATE_UNAVAILABLE" || msg != "The AG-UI adapter state is unavailable." {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	before, _ := os.ReadFile(filepath.Join(e.StateDir, "threads", "thread-e.json"))
	s.res.Body.Close() // the disconnect's terminal write is refused by the fence
	waitUntil(t, func() bool {
		r := post(t, e.URL, e.body("thread-e", "run-3", "Create a VPC", fenced(ownerA)), nil)
		return r.Status != 503
	})
	if after, _ := os.ReadFile(filepath.Join(e.StateDir, "threads", "thread-e.json")); string(after) == string(before) {
		t.Fatal("the new owner's run did not write the thread")
	}
}

// TestFenceEpochMovedReloads: a thread whose epoch moved while nothing ran
// on it here is read again from its file, which the hand-over replaced.
func TestFenceEpochMovedReloads(t *testing.T) {
	f := fence.New(filepath.Join(t.TempDir(), "handoff-control"))
	e := newEnv(t, envOptions{fence: f})
	assertSuccess(t, post(t, e.URL, e.body("thread-r", "run-1", "Create a VPC", fenced(ownerA)), nil))
	path := filepath.Join(e.StateDir, "threads", "thread-r.json")
	raw, _ := os.ReadFile(path)
	var doc map[string]any
	_ = json.Unmarshal(raw, &doc)
	// The hand-over brings a document that already admitted run-9.
	doc["runDigests"].(map[string]any)["run-9"] = "0000000000000000000000000000000000000000000000000000000000000000"
	raw, _ = json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(path, append(raw, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	moveEpoch(t, f, "thread-r", ownerA)
	r := post(t, e.URL, e.body("thread-r", "run-9", "Create a VPC", fenced(ownerA)), nil)
	if code, _ := errorOf(t, r); r.Status != 409 || code != "RUN_ID_CONFLICT" {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
}

// writeBarrier writes the thread's barrier document as another process
// leaves it.
func writeBarrier(t *testing.T, f *fence.Fence, threadID string, doc map[string]any) {
	t.Helper()
	sum := sha256.Sum256([]byte(fence.ThreadKey(threadID)))
	raw, _ := json.Marshal(doc)
	if err := os.WriteFile(filepath.Join(f.Root(), hex.EncodeToString(sum[:])+".json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFenceWithRedisStore: the fence gates the saves of the Redis store as
// those of the file store: a thread frozen by a hand-over mid-run keeps
// the document the fence last let through, and refuses new admissions.
func TestFenceWithRedisStore(t *testing.T) {
	client, err := redisstore.Open(redistest.URL(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	store := redisstore.New(client, "fence-test-"+randSuffix()+":")
	f := fence.New(filepath.Join(t.TempDir(), "handoff-control"))
	e := newEnv(t, envOptions{fence: f, wrap: func(state.Store) state.Store { return store }})
	if r := post(t, e.URL, e.body("thread-x", "run-1", "Create a VPC", nil), nil); r.Status != 400 {
		t.Fatalf("no owner: %d %s", r.Status, r.Body)
	}
	s := openStream(t, e.URL, e.body("thread-x", "run-2", "stall", fenced(ownerA)))
	s.waitFor(t, "CUSTOM") // the task id is saved
	doc, _, err := store.Load(context.Background(), "thread-x")
	if err != nil || doc.Execution.TaskID == nil {
		t.Fatalf("saved before the freeze: %v %v", doc, err)
	}
	o, _ := fence.CanonicalOwner(ownerA)
	writeBarrier(t, f, "thread-x", map[string]any{"phase": "QUIESCED", "epoch": 1, "writerCounter": 1, "sourceCounter": 0,
		"operations": map[string]any{}, "migrationId": "m-1", "targetOwner": o})
	s.res.Body.Close() // the disconnect's terminal save meets the frozen fence
	waitUntil(t, func() bool {
		r := post(t, e.URL, e.body("thread-x", "run-3", "Create a VPC", fenced(ownerA)), nil)
		return r.Status == 400
	})
	after, _, err := store.Load(context.Background(), "thread-x")
	if err != nil || after.Execution.TaskID == nil || *after.Execution.TaskID != *doc.Execution.TaskID || len(after.TerminalExecutionIDs) != 0 {
		t.Fatalf("the frozen thread was written: %+v %v", after, err)
	}
}
