package filestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	s, root := newStore(t)
	for _, id := range []string{"thread-1", "Thread-1", "../external/thread", strings.Repeat("会话", 40), strings.Repeat("x", 10000)} {
		want := sampleThread(id)
		mustSave(t, s, want)
		got := mustLoad(t, s, id)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip of %.12q…:\n got %+v\nwant %+v", id, got, want)
		}
	}
	// "../external/thread" must stay inside threads/.
	if _, err := os.Stat(filepath.Join(root, "external")); !os.IsNotExist(err) {
		t.Fatalf("a thread id escaped the threads directory: %v", err)
	}
	if got := len(dirEntries(t, filepath.Join(root, "threads"))); got != 5 {
		t.Fatalf("threads/ holds %d files, want 5", got)
	}
}

func TestLoadNotFound(t *testing.T) {
	s, root := newStore(t)
	ctx := context.Background()
	if _, err := load(ctx, s, "thread-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing root: %v", err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatal("Load created the state root")
	}
	mustSave(t, s, sampleThread("thread-2"))
	if _, err := load(ctx, s, "thread-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := load(ctx, s, ""); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("empty id: %v", err)
	}
}

func TestCorruptFileAffectsOnlyItsThread(t *testing.T) {
	s, _ := newStore(t)
	mustSave(t, s, sampleThread("thread-1"))
	mustSave(t, s, sampleThread("thread-2"))
	p, _ := s.Path("thread-1")
	if err := os.WriteFile(p, []byte(`{"schemaVersion": 1, "threadId": "thread-1", `), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := load(context.Background(), s, "thread-1"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("corrupt thread: %v", err)
	}
	if got := mustLoad(t, s, "thread-2"); got.ThreadID != "thread-2" {
		t.Fatalf("other thread: %+v", got)
	}
}

func TestModes(t *testing.T) {
	s, root := newStore(t)
	// An existing root with a wide mode is narrowed, as in the original.
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	mustSave(t, s, sampleThread("thread-1"))
	p, _ := s.Path("thread-1")
	for path, want := range map[string]os.FileMode{root: 0o700, filepath.Join(root, "threads"): 0o700, p: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("mode of %s = %o, want %o", path, got, want)
		}
	}
}

func TestNoTempFilesLeft(t *testing.T) {
	s, root := newStore(t)
	th := sampleThread("thread-1")
	for i := range 3 {
		th.Execution.PipelineSequence = int64(i)
		mustSave(t, s, th)
	}
	bad := sampleThread("thread-2")
	bad.Execution.Pending["perm-9"] = Pending{Value: map[string]any{"inputId": "perm-9", "options": []any{nan()}}}
	if err := saveLatest(context.Background(), s, bad); !errors.Is(err, ErrInvalidDocument) {
		t.Fatalf("NaN value: %v", err)
	}
	if got := dirEntries(t, filepath.Join(root, "threads")); !reflect.DeepEqual(got, []string{"thread-1.json"}) {
		t.Fatalf("threads/ = %v, want only thread-1.json", got)
	}
}

func TestSaveRefusesInvalidDocuments(t *testing.T) {
	cases := map[string]func(*Thread){
		"schemaVersion 2":  func(t *Thread) { t.SchemaVersion = 2 },
		"empty threadId":   func(t *Thread) { t.ThreadID = "" },
		"non-UTF-8 id":     func(t *Thread) { t.ThreadID = "a\xffb" },
		"empty contextId":  func(t *Thread) { t.ContextID = "" },
		"empty cwd":        func(t *Thread) { t.CWD = "" },
		"empty execution":  func(t *Thread) { t.Execution.ExecutionID = "" },
		"empty invocation": func(t *Thread) { t.Execution.RosInvocationID = "" },
		"negative cursor":  func(t *Thread) { t.Execution.PipelineSequence = -1 },
		"empty open step":  func(t *Thread) { t.Execution.PipelineOpenSteps = []string{""} },
		"bad text digest":  func(t *Thread) { t.Execution.TextSnapshotDigests = []string{strings.ToUpper(hex64('a'))} },
		"pending nil":      func(t *Thread) { t.Execution.Pending["perm-1"] = Pending{} },
		"pending mismatch": func(t *Thread) { t.Execution.Pending["perm-2"] = Pending{Value: map[string]any{"inputId": "perm-1"}} },
		"applied empty": func(t *Thread) {
			t.AppliedResumeDigests = []AppliedDigest{{ExecutionID: "e", InterruptID: "", Digest: "d"}}
		},
	}
	for name, mutate := range cases {
		s, root := newStore(t)
		th := sampleThread("thread-1")
		mutate(th)
		if err := saveLatest(context.Background(), s, th); !errors.Is(err, ErrInvalidDocument) {
			t.Errorf("%s: Save error = %v, want ErrInvalidDocument", name, err)
		}
		if _, err := os.Stat(root); !os.IsNotExist(err) {
			t.Errorf("%s: refused Save touched the disk", name)
		}
	}
	if err := saveLatest(context.Background(), New(t.TempDir()), nil); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("nil: %v", err)
	}
}

func TestCancelledContext(t *testing.T) {
	s, root := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := saveLatest(ctx, s, sampleThread("thread-1")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save: %v", err)
	}
	if _, err := load(ctx, s, "thread-1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load: %v", err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatal("cancelled Save touched the disk")
	}
}
