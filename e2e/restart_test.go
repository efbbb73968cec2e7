package e2e

import (
	"bufio"
	"bytes"
	encbinary "encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// startDemoAgent runs the embedded agent as its own process, so that it
// outlives the adapter processes of a restart test.
func startDemoAgent(t *testing.T) string {
	t.Helper()
	url, _ := startDemoAgentOn(t, e2etest.FreePort(t))
	return url
}

// startDemoAgentOn starts the demo agent on port and returns its URL and a
// function that kills it.
func startDemoAgentOn(t *testing.T, port int) (string, func()) {
	t.Helper()
	cmd := exec.Command(binary, "demo-agent", "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "IACCODE_A2A_HTTP_TOKEN=agent-token"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill := func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(func() {
		kill()
		if t.Failed() {
			t.Logf("demo agent output:\n%s", out.String())
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, url+"health", nil)
		req.Header.Set("Authorization", "Bearer agent-token")
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return url, kill
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("demo agent not ready:\n%s", out.String())
	return "", nil
}

// runAGUI posts a RunAgentInput and returns the decoded events.
func runAGUI(t *testing.T, url string, body map[string]any) (int, []map[string]any, string) {
	t.Helper()
	raw, _ := json.Marshal(body)
	res, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var all bytes.Buffer
	_, _ = all.ReadFrom(res.Body)
	var evs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(all.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev map[string]any
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
	}
	e2etest.CheckEvents(t, evs)
	return res.StatusCode, evs, all.String()
}

func runInput(threadID, runID, text, cwd string, resume []any) map[string]any {
	msgs := []any{}
	if text != "" {
		msgs = append(msgs, map[string]any{"id": "m-" + runID, "role": "user", "content": text})
	}
	b := map[string]any{
		"threadId": threadID, "runId": runID, "state": map[string]any{}, "messages": msgs,
		"tools": []any{}, "context": []any{},
		"forwardedProps": map[string]any{"iacCode": map[string]any{"schemaVersion": 1, "rosInvocationId": "invocation-1", "cwd": cwd}},
	}
	if resume != nil {
		b["resume"] = resume
	}
	return b
}

func lastEvent(evs []map[string]any) map[string]any {
	if len(evs) == 0 {
		return map[string]any{}
	}
	return evs[len(evs)-1]
}

// interruptOf returns the single interrupt of an interrupt outcome.
func interruptOf(t *testing.T, evs []map[string]any) map[string]any {
	t.Helper()
	fin := lastEvent(evs)
	o, _ := fin["outcome"].(map[string]any)
	if fin["type"] != "RUN_FINISHED" || o["type"] != "interrupt" {
		t.Fatalf("want an interrupt outcome, got %v", fin)
	}
	return o["interrupts"].([]any)[0].(map[string]any)
}

// TestRestartAfterInterrupt kills the adapter with SIGKILL after an
// interrupt, starts it again on the same state directory, and resumes.
func TestRestartAfterInterrupt(t *testing.T) {
	agent := startDemoAgent(t)
	stateDir := t.TempDir()
	env := []string{"IAC_CODE_AGUI_A2A_URL=" + agent, "IAC_CODE_AGUI_A2A_TOKEN=agent-token"}
	a := startServer(t, stateDir, env...)
	cwd := filepath.Join(a.Root, "ws")
	_, evs, _ := runAGUI(t, a.URL, runInput("thread-restart", "run-1", "Deploy (permission)", cwd, nil))
	it := interruptOf(t, evs)
	a.Kill()

	b := startServer(t, stateDir, append(env, "IAC_CODE_AGUI_ALLOWED_CWDS="+a.Root)...)
	// The restarted adapter remembers the run ids: a replay is refused.
	status, _, body := runAGUI(t, b.URL, runInput("thread-restart", "run-1", "Deploy (permission)", cwd, nil))
	if status != 409 || !strings.Contains(body, "DUPLICATE_RUN_ID") {
		t.Fatalf("replay after restart: %d %s", status, body)
	}
	resume := []any{map[string]any{"interruptId": it["id"], "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}}
	status, evs, body = runAGUI(t, b.URL, runInput("thread-restart", "run-2", "", cwd, resume))
	fin := lastEvent(evs)
	if status != 200 || fin["type"] != "RUN_FINISHED" || fin["outcome"].(map[string]any)["type"] != "success" {
		t.Fatalf("resume after restart: %d %v\n%s", status, fin, body)
	}
	if !strings.Contains(body, `"type":"TOOL_CALL_RESULT"`) {
		t.Fatalf("no tool result after resume:\n%s", body)
	}
}

// TestResumeFromOriginalStateFile writes the thread file by hand in the
// original adapter's format (protocol.md §8.3, Python's json.dumps with
// indent=2 and sort_keys, a stale expiresAt) and resumes from it.
func TestResumeFromOriginalStateFile(t *testing.T) {
	agent := startDemoAgent(t)
	stateDir := t.TempDir()
	env := []string{"IAC_CODE_AGUI_A2A_URL=" + agent, "IAC_CODE_AGUI_A2A_TOKEN=agent-token"}
	a := startServer(t, stateDir, env...)
	cwd := filepath.Join(a.Root, "ws")
	_, evs, _ := runAGUI(t, a.URL, runInput("thread-original", "run-1", "Deploy (permission)", cwd, nil))
	it := interruptOf(t, evs)
	var session map[string]any
	for _, ev := range evs {
		if ev["name"] == "iac-code.session.v1" {
			session = ev["value"].(map[string]any)
		}
	}
	a.Kill()

	md := it["metadata"].(map[string]any)
	projection := map[string]any{}
	for k, v := range md {
		if k != "standardOptions" {
			projection[k] = v
		}
	}
	projection["expiresAt"] = "2026-01-01T00:00:00Z"
	pj, _ := json.MarshalIndent(projection, "      ", "  ")
	doc := fmt.Sprintf(`{
  "appliedResumeDigests": [],
  "contextId": %q,
  "cwd": %q,
  "execution": {
    "executionId": %q,
    "pending": {
      %q: {
        "expiresAt": "2026-01-01T00:00:00Z",
        "sideband": false,
        "value": %s
      }
    },
    "pipelineOpenSteps": [],
    "pipelineSequence": 0,
    "rosInvocationId": "invocation-1",
    "taskId": %q,
    "textSnapshotDigests": []
  },
  "iacCodeSessionId": %q,
  "runDigests": {
    "run-1": "0000000000000000000000000000000000000000000000000000000000000000"
  },
  "schemaVersion": 1,
  "terminalExecutionIds": [],
  "threadId": "thread-original",
  "userId": null
}
`, session["contextId"], cwd, session["executionId"], it["id"], pj, session["taskId"], session["sessionId"])
	file := filepath.Join(stateDir, "threads", "thread-original.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}

	b := startServer(t, stateDir, append(env, "IAC_CODE_AGUI_ALLOWED_CWDS="+a.Root)...)
	resume := []any{map[string]any{"interruptId": it["id"], "status": "cancelled"}}
	status, evs, body := runAGUI(t, b.URL, runInput("thread-original", "run-2", "", cwd, resume))
	fin := lastEvent(evs)
	if status != 200 || fin["type"] != "RUN_FINISHED" {
		t.Fatalf("resume from the original format: %d %v\n%s", status, fin, body)
	}
	if !strings.Contains(body, "permission was denied") {
		t.Fatalf("a cancelled permission must reach A2A as deny:\n%s", body)
	}
	// Our rewrite keeps the original's layout: sorted keys, two spaces, LF.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("{\n  \"appliedResumeDigests\": [\n")) || !bytes.HasSuffix(raw, []byte("}\n")) {
		t.Fatalf("rewritten file:\n%s", raw)
	}
}

// TestResumeAfterAgentRestart: when the A2A process restarted and lost the
// iac-code session, the resume ends EXECUTION_LOST (protocol.md §5.6 step 2).
func TestResumeAfterAgentRestart(t *testing.T) {
	port := e2etest.FreePort(t)
	agent, kill := startDemoAgentOn(t, port)
	env := []string{"IAC_CODE_AGUI_A2A_URL=" + agent, "IAC_CODE_AGUI_A2A_TOKEN=agent-token"}
	s := startServer(t, "", env...)
	cwd := filepath.Join(s.Root, "ws")
	_, evs, _ := runAGUI(t, s.URL, runInput("thread-agent-restart", "run-1", "permission", cwd, nil))
	it := interruptOf(t, evs)
	kill()
	startDemoAgentOn(t, port)
	resume := []any{map[string]any{"interruptId": it["id"], "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}}
	_, evs, body := runAGUI(t, s.URL, runInput("thread-agent-restart", "run-2", "", cwd, resume))
	fin := lastEvent(evs)
	if fin["code"] != "EXECUTION_LOST" || fin["message"] != "The iac-code session to resume is unavailable." {
		t.Fatalf("got %v\n%s", fin, body)
	}
}

// TestStartRetiresTheJournal: a state directory of the earlier version
// of this gateway, which kept a write-ahead journal and spare files beside
// threads/ (docs/decisions.md, "Leftovers of the journal"). With the
// journal's saves all in the thread files, the start removes both and the
// interrupt is resumed from the thread file; with a save the thread file
// lacks, the binary refuses to start, says why, and changes nothing.
func TestStartRetiresTheJournal(t *testing.T) {
	agent := startDemoAgent(t)
	stateDir := t.TempDir()
	env := []string{"IAC_CODE_AGUI_A2A_URL=" + agent, "IAC_CODE_AGUI_A2A_TOKEN=agent-token"}
	a := startServer(t, stateDir, env...)
	cwd := filepath.Join(a.Root, "ws")
	_, evs, _ := runAGUI(t, a.URL, runInput("thread-legacy", "run-1", "Deploy (permission)", cwd, nil))
	it := interruptOf(t, evs)
	a.Kill()
	file := filepath.Join(stateDir, "threads", "thread-legacy.json")
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The earlier version's leftovers: a spare and a journal whose one
	// record is the thread file's document.
	if err := os.MkdirAll(filepath.Join(stateDir, ".spare"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stateDir, ".spare", "0"), []byte("spare"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeLegacyJournal(t, stateDir, "thread-legacy", doc)

	b := startServer(t, stateDir, append(env, "IAC_CODE_AGUI_ALLOWED_CWDS="+a.Root)...)
	if entries, _ := os.ReadDir(stateDir); len(entries) != 1 || entries[0].Name() != "threads" {
		t.Fatalf("the state directory holds %v after the start, want only threads", entries)
	}
	resume := []any{map[string]any{"interruptId": it["id"], "status": "resolved", "payload": map[string]any{"decision": "allow_once"}}}
	status, evs, body := runAGUI(t, b.URL, runInput("thread-legacy", "run-2", "", cwd, resume))
	if fin := lastEvent(evs); status != 200 || fin["type"] != "RUN_FINISHED" || fin["outcome"].(map[string]any)["type"] != "success" {
		t.Fatalf("resume after the earlier version: %d %v\n%s", status, fin, body)
	}
	b.Stop(t)

	// A journaled save the thread file does not hold: no start.
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	writeLegacyJournal(t, stateDir, "thread-legacy", doc)
	cmd := exec.Command(binary, "--port", strconv.Itoa(e2etest.FreePort(t)), "--state-dir", stateDir)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "IAC_CODE_AGUI_ALLOWED_CWDS=" + a.Root}, env...)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "1 thread files ([thread-legacy.json]) differ from their last save in "+filepath.Join(stateDir, ".journal")) {
		t.Fatalf("start over an unapplied journal: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(after, before) {
		t.Fatal("the thread file changed")
	}
	if _, err := os.Stat(filepath.Join(stateDir, ".journal", "0")); err != nil {
		t.Fatalf("the journal was removed: %v", err)
	}
}

// writeLegacyJournal writes <stateDir>/.journal/0 as the earlier version
// left it after a kill: a live header (sequence 1, epoch 7) and one record
// of doc for threadID (layout: internal/state/filestore/legacy.go).
func writeLegacyJournal(t *testing.T, stateDir, threadID string, doc []byte) {
	t.Helper()
	crc := crc32.MakeTable(crc32.Castagnoli)
	h := append([]byte("IACJRNL1"), encbinary.LittleEndian.AppendUint64(nil, 1)...)
	h = encbinary.LittleEndian.AppendUint64(h, 7)
	h = append(h, 0, 0, 0, 0)
	h = encbinary.LittleEndian.AppendUint32(h, crc32.Checksum(h, crc))
	body := encbinary.LittleEndian.AppendUint16(nil, uint16(len(threadID)))
	body = append(append(body, threadID...), 0)
	body = encbinary.LittleEndian.AppendUint64(body, uint64(time.Now().UnixNano()))
	body = append(body, doc...)
	rec := encbinary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	rec = encbinary.LittleEndian.AppendUint64(rec, 7)
	rec = encbinary.LittleEndian.AppendUint32(rec, crc32.Update(crc32.Checksum(rec, crc), crc, body))
	dir := filepath.Join(stateDir, ".journal")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "0"), append(append(h, rec...), body...), 0o600); err != nil {
		t.Fatal(err)
	}
}
