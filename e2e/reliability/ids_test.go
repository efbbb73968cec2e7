package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// TestIDLengthsAreBounded: an id longer than 256 characters, or with a
// control character, is refused with the envelope error before anything is
// stored (issue 15 finding 6: two 9,000,000-character run ids made a thread
// file the loader refused).
func TestIDLengthsAreBounded(t *testing.T) {
	s := startServer(t, serverOpts{})
	cwd := filepath.Join(s.Root, "ws")
	huge := strings.Repeat("r", 9_000_000)
	cases := []struct {
		name string
		body map[string]any
	}{
		{"runId of 9,000,000 characters", input("t-ids", huge, "hello", cwd, nil)},
		{"runId of 257 characters", input("t-ids", strings.Repeat("r", 257), "hello", cwd, nil)},
		{"threadId of 257 characters", input(strings.Repeat("会", 257), "run-1", "hello", cwd, nil)},
		{"runId with a newline", input("t-ids", "run\n1", "hello", cwd, nil)},
		{"threadId with NUL", input("t\x00ids", "run-1", "hello", cwd, nil)},
		{"parentRunId of 257 characters", withKey(input("t-ids", "run-1", "hello", cwd, nil), "parentRunId", strings.Repeat("p", 257))},
		{"message id of 257 characters", withMessageID(input("t-ids", "run-1", "hello", cwd, nil), strings.Repeat("m", 257))},
		{"interruptId of 257 characters", input("t-ids", "run-1", "", cwd, []any{map[string]any{"interruptId": strings.Repeat("i", 257), "status": "cancelled"}})},
	}
	for _, c := range cases {
		status, _, body := post(t, s.URL, c.body)
		if status != 400 || errorCode(body) != "INVALID_INPUT" || !strings.Contains(body, "Invalid AG-UI RunAgentInput envelope.") {
			t.Errorf("%s: %d %.200s", c.name, status, body)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(s.StateDir, "threads")); len(entries) != 0 {
		t.Fatalf("refused requests stored %d files", len(entries))
	}
	// 256 characters (multi-byte ones included) are accepted.
	thread := strings.Repeat("会", 256)
	status, evs, body := post(t, s.URL, input(thread, strings.Repeat("r", 256), "hello", cwd, nil))
	if status != 200 || outcome(evs) != "success" {
		t.Fatalf("256-character ids: %d %.300s", status, body)
	}
}

func withKey(b map[string]any, k string, v any) map[string]any {
	b[k] = v
	return b
}

func withMessageID(b map[string]any, id string) map[string]any {
	b["messages"].([]any)[0].(map[string]any)["id"] = id
	return b
}

// TestRunHistoryIsBounded seeds a thread file in the original's format
// with MaxRunDigests runs (no runOrder), then runs on the real server: the
// history stays at the bound, the new run is the newest, an evicted run id
// is admitted as a new run and a recent one is still a duplicate.
func TestRunHistoryIsBounded(t *testing.T) {
	stateDir := t.TempDir()
	root := t.TempDir()
	cwd := filepath.Join(root, "ws")
	if err := os.MkdirAll(cwd, 0o700); err != nil {
		t.Fatal(err)
	}
	th := state.NewThread("t-history", cwd, nil, "exec-0", "invocation-1")
	th.MarkTerminal()
	for i := range state.MaxRunDigests {
		th.RunDigests[fmt.Sprintf("old-%04d", i)] = strings.Repeat("a", 64)
	}
	data, err := state.Encode(th)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	_ = json.Unmarshal(data, &doc)
	delete(doc, "runOrder") // as the original writes it
	data, _ = json.MarshalIndent(doc, "", "  ")
	if err := os.MkdirAll(filepath.Join(stateDir, "threads"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(stateDir, "threads", "t-history.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverOpts{stateDir: stateDir, root: root})
	if status, evs, body := post(t, s.URL, input("t-history", "new-1", "hello", cwd, nil)); status != 200 || outcome(evs) != "success" {
		t.Fatalf("run on a full history: %d %.300s", status, body)
	}
	stored := readDoc(t, file)
	digests := stored["runDigests"].(map[string]any)
	order := stored["runOrder"].([]any)
	if len(digests) != state.MaxRunDigests || len(order) != state.MaxRunDigests || order[len(order)-1] != "new-1" {
		t.Fatalf("history: %d digests, %d ordered, newest %v", len(digests), len(order), order[len(order)-1])
	}
	if _, ok := digests["old-0000"]; ok {
		t.Fatal("the oldest run was kept")
	}
	// A recent run id is still a duplicate; the evicted one runs again.
	if status, _, body := post(t, s.URL, input("t-history", "old-0999", "hello", cwd, nil)); status != 409 || errorCode(body) != "RUN_ID_CONFLICT" {
		t.Fatalf("recent run id: %d %s", status, body)
	}
	if status, evs, body := post(t, s.URL, input("t-history", "old-0000", "hello", cwd, nil)); status != 200 || outcome(evs) != "success" {
		t.Fatalf("evicted run id: %d %.300s", status, body)
	}
}

func readDoc(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return doc
}
