package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore/redistest"
)

// TestRedisStateStore: with --state-store on a real Redis, a run's thread
// lives in Redis (under the prefix, as the same schema-1 document) and no
// thread file is written; the log names the store kind, never its URL.
func TestRedisStateStore(t *testing.T) {
	url := redistest.URL(t)
	prefix := fmt.Sprintf("apptest-%d:", time.Now().UnixNano())
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // the embedded agent
	r := startMain(t, map[string]string{
		"IAC_CODE_AGUI_ALLOWED_CWDS":     root,
		"IAC_CODE_AGUI_STATE_STORE":      url,
		"IAC_CODE_AGUI_REDIS_KEY_PREFIX": prefix,
		"IAC_CODE_AGUI_DEMO":             "1",
	})
	r.waitHealthy(t)
	evs := r.runNormalTurn(t, root)
	if last := evs[len(evs)-1]; last["type"] != "RUN_FINISHED" {
		t.Fatalf("last event %v", last)
	}
	c, err := redisstore.Open(url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	doc, rev, err := redisstore.New(c, prefix).Load(context.Background(), "thread-app")
	if err != nil || rev == state.NoRevision || doc.RunDigests["run-1"] == "" {
		t.Fatalf("thread in Redis: %v %q %v", doc, rev, err)
	}
	if logs := r.stderr.String(); !strings.Contains(logs, "stateStore=redis") || strings.Contains(logs, url) {
		t.Fatalf("log line of the store:\n%s", logs)
	}
}

// TestImportState: a thread file written by the original adapter is
// imported into Redis unchanged, and a second import leaves it alone.
func TestImportState(t *testing.T) {
	url := redistest.URL(t)
	prefix := fmt.Sprintf("import-%d:", time.Now().UnixNano())
	dir := t.TempDir()
	raw, err := os.ReadFile("../state/testdata/original-thread-1.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := state.Decode(raw, "thread-1")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := state.FileKey("thread-1")
	if err := os.MkdirAll(filepath.Join(dir, "threads"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "threads", key+".json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	// A file whose name does not match its thread id is reported.
	if err := os.WriteFile(filepath.Join(dir, "threads", "other.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"IAC_CODE_AGUI_STATE_STORE": url, "IAC_CODE_AGUI_REDIS_KEY_PREFIX": prefix}
	run := func() (int, string, string) {
		var out, errb bytes.Buffer
		code := mainContext(context.Background(), []string{"import-state", "--state-dir", dir}, func(k string) string { return env[k] }, &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := run()
	if code != 1 || out != "imported 1, already present 0, failed 1\n" || !strings.Contains(errs, "other.json: the file name does not match its threadId") {
		t.Fatalf("first import: %d %q %q", code, out, errs)
	}
	c, err := redisstore.Open(url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, _, err := redisstore.New(c, prefix).Load(context.Background(), "thread-1")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := state.Encode(want)
	b, _ := state.Encode(got)
	if !bytes.Equal(a, b) {
		t.Fatalf("imported document differs:\n%s\nwant\n%s", b, a)
	}
	if err := os.Remove(filepath.Join(dir, "threads", "other.json")); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run(); code != 0 || out != "imported 0, already present 1, failed 0\n" {
		t.Fatalf("second import: %d %q", code, out)
	}
}
