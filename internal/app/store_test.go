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

// TestExportState: the way back. The original's thread file, imported
// into Redis and exported into an empty directory, comes out byte for
// byte as the file store writes it; a second export, and an export over a
// file that already exists, leave the files alone; a symlink under the
// thread's name is not followed, and it and a document that does not
// decode are reported and make the exit status 1.
func TestExportState(t *testing.T) {
	url := redistest.URL(t)
	// original-thread-1.json is the original's older generation, not
	// canonical: the file store re-saves it as original-thread-1.resaved.json
	// (internal/state's TestOriginalFormat). The resaved one is canonical,
	// so its round trip must be the identity.
	for _, fixture := range []string{"original-thread-1.json", "original-thread-1.resaved.json"} {
		t.Run(fixture, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("../state/testdata", fixture))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile("../state/testdata/original-thread-1.resaved.json")
			if err != nil {
				t.Fatal(err)
			}
			key, _ := state.FileKey("thread-1")
			env := map[string]string{
				"IAC_CODE_AGUI_STATE_STORE":      url,
				"IAC_CODE_AGUI_REDIS_KEY_PREFIX": fmt.Sprintf("export-%d:", time.Now().UnixNano()),
			}
			src := t.TempDir()
			writeFile(t, filepath.Join(src, "threads", key+".json"), raw)
			if code, out, errs := runSub(env, "import-state", "--state-dir", src); code != 0 || out != "imported 1, already present 0, failed 0\n" {
				t.Fatalf("import: %d %q %q", code, out, errs)
			}

			dst := filepath.Join(t.TempDir(), "agui") // created by the export
			for i, wantOut := range []string{"exported 1, already present 0, failed 0\n", "exported 0, already present 1, failed 0\n"} {
				if code, out, errs := runSub(env, "export-state", "--state-dir", dst); code != 0 || out != wantOut || errs != "" {
					t.Fatalf("export %d: %d %q %q", i+1, code, out, errs)
				}
				path := filepath.Join(dst, "threads", key+".json")
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("exported file:\n%s\nwant\n%s", got, want)
				}
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
					t.Fatalf("mode: %v %v", fi.Mode(), err)
				}
				if entries, _ := os.ReadDir(filepath.Join(dst, "threads")); len(entries) != 1 {
					t.Fatalf("threads/ holds %v", entries)
				}
			}

			// A file already there is left alone, whatever it holds.
			other := t.TempDir()
			mine := []byte("not the Redis copy\n")
			writeFile(t, filepath.Join(other, "threads", key+".json"), mine)
			if code, out, errs := runSub(env, "export-state", "--state-dir", other); code != 0 || out != "exported 0, already present 1, failed 0\n" {
				t.Fatalf("export over a file: %d %q %q", code, out, errs)
			}
			if got, _ := os.ReadFile(filepath.Join(other, "threads", key+".json")); !bytes.Equal(got, mine) {
				t.Fatalf("existing file changed: %q", got)
			}
			// A symlink under the thread's name is not followed: it fails.
			linked := t.TempDir()
			target := filepath.Join(t.TempDir(), "elsewhere.json")
			writeFile(t, target, mine)
			if err := os.Mkdir(filepath.Join(linked, "threads"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(linked, "threads", key+".json")); err != nil {
				t.Fatal(err)
			}
			if code, out, errs := runSub(env, "export-state", "--state-dir", linked); code != 1 || out != "exported 0, already present 0, failed 1\n" || !strings.Contains(errs, "refusing symlink") {
				t.Fatalf("export over a symlink: %d %q %q", code, out, errs)
			}
			if got, _ := os.ReadFile(target); !bytes.Equal(got, mine) {
				t.Fatalf("symlink target changed: %q", got)
			}

			// A document that does not decode fails alone.
			c, err := redisstore.Open(url, "")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.HSet(context.Background(), env["IAC_CODE_AGUI_REDIS_KEY_PREFIX"]+"thread:{corrupt}", "doc", "{}", "rev", 1).Err(); err != nil {
				t.Fatal(err)
			}
			third := t.TempDir()
			code, out, errs := runSub(env, "export-state", "--state-dir", third)
			if code != 1 || out != "exported 1, already present 0, failed 1\n" || !strings.Contains(errs, "export-state: corrupt: ") {
				t.Fatalf("export with a corrupt document: %d %q %q", code, out, errs)
			}
			if _, err := os.Stat(filepath.Join(third, "threads", "corrupt.json")); !os.IsNotExist(err) {
				t.Fatalf("corrupt document written: %v", err)
			}
		})
	}
}

// TestExportStateRefusals: export-state needs a Redis store (exit 2
// otherwise), and an unreachable one fails without printing its password.
func TestExportStateRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, store := range []string{"", "file"} {
		code, out, errs := runSub(map[string]string{"IAC_CODE_AGUI_STATE_STORE": store}, "export-state", "--state-dir", dir)
		if code != 2 || out != "" || errs != "export-state: --state-store must name the Redis store to export from\n" {
			t.Fatalf("store %q: %d %q %q", store, code, out, errs)
		}
	}
	env := map[string]string{"IAC_CODE_AGUI_STATE_STORE": "redis://:s3cret-pw@127.0.0.1:1/0?dial_timeout=200ms&max_retries=-1"}
	code, out, errs := runSub(env, "export-state", "--state-dir", dir)
	if code != 1 || out != "exported 0, already present 0, failed 0\n" || !strings.Contains(errs, "export-state: ") || strings.Contains(out+errs, "s3cret") {
		t.Fatalf("unreachable store: %d %q %q", code, out, errs)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("state directory touched: %v", entries)
	}
}

// runSub runs one sub-command with env as the whole environment.
func runSub(env map[string]string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := mainContext(context.Background(), args, func(k string) string { return env[k] }, &out, &errb)
	return code, out.String(), errb.String()
}

// writeFile writes data to path as a thread file, creating its directory.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
