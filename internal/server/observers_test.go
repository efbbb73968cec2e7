package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Observers (protocol.md §7.2) seeded like the original's.

// texts returns the TEXT_MESSAGE_CONTENT deltas of evs, in order.
func texts(evs []map[string]any) []string {
	var out []string
	for _, ev := range evs {
		if ev["type"] == "TEXT_MESSAGE_CONTENT" {
			out = append(out, ev["delta"].(string))
		}
	}
	return out
}

// threadDoc reads a thread's document from the state directory.
func threadDoc(t *testing.T, e *env, threadID string) map[string]any {
	t.Helper()
	key, err := state.FileKey(threadID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(e.StateDir, "threads", key+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestObserversSeeEachTextOnce: an observer that joins mid-turn (at the
// permission wait, the A2A turn still open) and one that joins the
// resumed turn each see every text exactly once: nothing the thread
// already has (its textSnapshotDigests), and each new text once. The
// agent pauses between frames so that the second observer joins while the
// resumed turn is still running.
func TestObserversSeeEachTextOnce(t *testing.T) {
	e := newEnv(t, envOptions{stepDelay: 150 * time.Millisecond})
	const th = "thread-observers"
	const first = "I need to inspect the workspace first."
	reply := "The workspace is " + filepath.Join(e.Root, "ws") + "."

	r := post(t, e.URL, e.body(th, "run-1", "run pwd, permission please", nil), nil)
	its := interrupts(t, r)
	if got := texts(r.Events); !slices.Equal(got, []string{first}) {
		t.Fatalf("run-1 texts %q", got)
	}
	exec := sessionOf(t, r.Events)["executionId"].(string)
	// The thread has the text: its digest is durable.
	sum := sha256.Sum256([]byte(first))
	ex := threadDoc(t, e, th)["execution"].(map[string]any)
	if ds, _ := ex["textSnapshotDigests"].([]any); !slices.Contains(ds, any(hex.EncodeToString(sum[:]))) {
		t.Fatalf("textSnapshotDigests %v lack the first text's digest", ds)
	}

	// Mid-turn: the observer sees the wait, not the text again.
	o := post(t, subscribeURL(e, exec), map[string]any{"threadId": th, "runId": "run-1", "rosInvocationId": "invocation-1"}, nil)
	if o.Status != 200 {
		t.Fatalf("observe: %d %s", o.Status, o.Body)
	}
	if got := texts(o.Events); len(got) != 0 {
		t.Fatalf("mid-turn observer got texts %q, want none (the thread has them)", got)
	}
	fin := last(o.Events)
	out, _ := fin["outcome"].(map[string]any)
	got, _ := out["interrupts"].([]any)
	if fin["type"] != "RUN_FINISHED" || out["type"] != "interrupt" || len(got) != 1 || got[0].(map[string]any)["id"] != its[0]["id"] {
		t.Fatalf("mid-turn observer ended %v (%v)", fin, types(o.Events))
	}
	assertBalanced(t, o.Events)

	// After the resume: the answer was accepted (the tool result is
	// out), the turn goes on, and the observer follows it to its end.
	run := openStream(t, e.URL, resumeBody(e, th, "run-2", allow(its[0]["id"])))
	run.waitFor(t, "TOOL_CALL_RESULT")
	o2 := openStream(t, subscribeURL(e, exec), map[string]any{"threadId": th, "runId": "run-2", "rosInvocationId": "invocation-1"})
	end := o2.rest(t)
	if got := texts(o2.events); !slices.Equal(got, []string{reply}) {
		t.Fatalf("observer after the resume got texts %q, want [%q] (%v)", got, reply, types(o2.events))
	}
	if end["type"] != "RUN_FINISHED" || end["outcome"].(map[string]any)["type"] != "success" || end["runId"] != "run-2" {
		t.Fatalf("observer after the resume ended %v", end)
	}
	assertBalanced(t, o2.events)
	if end := run.rest(t); end["type"] != "RUN_FINISHED" {
		t.Fatalf("resumed run ended %v", end)
	}
	if got := texts(run.events); !slices.Equal(got, []string{reply}) {
		t.Fatalf("resumed run texts %q", got)
	}
}
