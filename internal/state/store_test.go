package state

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func newStore(t *testing.T) (*FileStore, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "agui")
	return NewFileStore(root), root
}

func mustSave(t *testing.T, s *FileStore, th *Thread) {
	t.Helper()
	if err := s.Save(context.Background(), th); err != nil {
		t.Fatalf("Save(%q): %v", th.ThreadID, err)
	}
}

func mustLoad(t *testing.T, s *FileStore, id string) *Thread {
	t.Helper()
	th, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	return th
}

// dirEntries lists file names in dir, so tests can spot leftover temp files.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

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

// expectedSample is the document below as Python's
// json.dumps(indent=2, sort_keys=True, ensure_ascii=False) + "\n" writes it
// (generated once with the original's serialiser settings).
const expectedSample = `{
  "appliedResumeDigests": [
    {
      "digest": "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
      "executionId": "exec-a",
      "interruptId": "int-2"
    },
    {
      "digest": "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
      "executionId": "exec-b",
      "interruptId": "int-1"
    }
  ],
  "contextId": "agui-611a498b849c24419ba931a77442e24f85a776ed",
  "cwd": "/srv/iac/会话",
  "execution": {
    "executionId": "3f1c2a9e-6b7d-4c1e-9a0b-2d4e6f8a1b3c",
    "lastTaskId": null,
    "pending": {
      "perm-1": {
        "sideband": true,
        "value": {
          "inputId": "perm-1",
          "kind": "permission",
          "options": [
            {
              "id": "allow",
              "label": "允许"
            }
          ],
          "required": true,
          "title": "Run <tool> & go"
        }
      }
    },
    "pipelineOpenSteps": [
      "candidate:candidate-0:template_generating",
      "step:intent_parsing"
    ],
    "pipelineSequence": 7,
    "rosInvocationId": "ros-1",
    "taskId": "task-1",
    "textSnapshotDigests": [
      "1111111111111111111111111111111111111111111111111111111111111111",
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    ]
  },
  "iacCodeSessionId": null,
  "runDigests": {
    "run-1": "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
    "run-2": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
  },
  "schemaVersion": 1,
  "terminalExecutionIds": [
    "exec-a",
    "exec-b"
  ],
  "threadId": "会话-1",
  "userId": "user<1>&co"
}
`

func TestSaveByteExact(t *testing.T) {
	s, root := newStore(t)
	th := &Thread{
		SchemaVersion: 1,
		ThreadID:      "会话-1",
		ContextID:     ContextIDFor("会话-1"),
		CWD:           "/srv/iac/会话",
		UserID:        strp("user<1>&co"),
		Execution: Execution{
			ExecutionID:         "3f1c2a9e-6b7d-4c1e-9a0b-2d4e6f8a1b3c",
			RosInvocationID:     "ros-1",
			TaskID:              strp("task-1"),
			PipelineSequence:    7,
			PipelineOpenSteps:   []string{"step:intent_parsing", "candidate:candidate-0:template_generating"},
			TextSnapshotDigests: []string{hex64('a'), hex64('1'), hex64('a')},
			Pending: map[string]Pending{"perm-1": {Sideband: true, Value: map[string]any{
				"title": "Run <tool> & go", "required": true, "kind": "permission", "inputId": "perm-1",
				"options":   []any{map[string]any{"label": "允许", "id": "allow"}},
				"toolInput": map[string]any{"secret": "must not be stored"},
			}}},
		},
		RunDigests: map[string]string{"run-2": hex64('b'), "run-1": hex64('c'), "run-empty": ""},
		AppliedResumeDigests: []AppliedDigest{
			{"exec-b", "int-1", hex64('f')}, {"exec-a", "int-2", hex64('e')},
		},
		TerminalExecutionIDs: []string{"exec-b", "exec-a", "", "exec-b"},
	}
	mustSave(t, s, th)
	path, _ := s.Path("会话-1")
	if filepath.Dir(path) != filepath.Join(root, "threads") || filepath.Base(path) != "aguiid~e4bc9ae8af9d2d31.json" {
		t.Fatalf("path = %s", path)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != expectedSample {
		t.Fatalf("file content:\n%s\nwant:\n%s", got, expectedSample)
	}
	if bytes.Contains(got, []byte("must not be stored")) {
		t.Fatal("non-projected key persisted")
	}
}

// TestOriginalFormat loads a file in the original adapter's format (older
// generation: stale expiresAt, no lastTaskId, unknown key, non-string digest
// entries) and checks that re-saving yields what the original would write.
func TestOriginalFormat(t *testing.T) {
	s, root := newStore(t)
	in, err := os.ReadFile("testdata/original-thread-1.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/original-thread-1.resaved.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "threads")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "thread-1.json"), in, 0o600); err != nil {
		t.Fatal(err)
	}
	th := mustLoad(t, s, "thread-1")
	e := th.Execution
	if th.UserID != nil || th.IacCodeSessionID != nil || e.TaskID != nil || e.LastTaskID != nil ||
		e.PipelineSequence != 42 || e.RosInvocationID != "ros-inv-1" || len(e.Pending) != 2 ||
		!e.Pending["perm-2"].Sideband || e.Pending["perm-1"].Sideband {
		t.Fatalf("loaded %+v", th)
	}
	if !reflect.DeepEqual(th.RunDigests, map[string]string{"run-1": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}) ||
		!reflect.DeepEqual(th.TerminalExecutionIDs, []string{"exec-0"}) {
		t.Fatalf("filtering: runDigests=%v terminal=%v", th.RunDigests, th.TerminalExecutionIDs)
	}
	if _, stale := e.Pending["perm-1"].Value["expiresAt"]; stale {
		t.Fatal("expiresAt leaked into the pending value")
	}
	mustSave(t, s, th)
	got, err := os.ReadFile(filepath.Join(dir, "thread-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Byte-equal to the original's serialisation, including "weight": 1.0.
	if !bytes.Equal(got, want) {
		t.Fatalf("re-saved:\n%s\nwant:\n%s", got, want)
	}
}

func TestLoadNotFound(t *testing.T) {
	s, root := newStore(t)
	ctx := context.Background()
	if _, err := s.Load(ctx, "thread-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing root: %v", err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatal("Load created the state root")
	}
	mustSave(t, s, sampleThread("thread-2"))
	if _, err := s.Load(ctx, "thread-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := s.Load(ctx, ""); !errors.Is(err, ErrUnavailable) {
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
	if _, err := s.Load(context.Background(), "thread-1"); !errors.Is(err, ErrUnavailable) {
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
	if err := s.Save(context.Background(), bad); !errors.Is(err, ErrInvalidDocument) {
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
		"applied empty":    func(t *Thread) { t.AppliedResumeDigests = []AppliedDigest{{"e", "", "d"}} },
	}
	for name, mutate := range cases {
		s, root := newStore(t)
		th := sampleThread("thread-1")
		mutate(th)
		if err := s.Save(context.Background(), th); !errors.Is(err, ErrInvalidDocument) {
			t.Errorf("%s: Save error = %v, want ErrInvalidDocument", name, err)
		}
		if _, err := os.Stat(root); !os.IsNotExist(err) {
			t.Errorf("%s: refused Save touched the disk", name)
		}
	}
	if err := NewFileStore(t.TempDir()).Save(context.Background(), nil); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("nil: %v", err)
	}
}

func TestCancelledContext(t *testing.T) {
	s, root := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Save(ctx, sampleThread("thread-1")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save: %v", err)
	}
	if _, err := s.Load(ctx, "thread-1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load: %v", err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatal("cancelled Save touched the disk")
	}
}

func TestNumbersKeepTheirLiteral(t *testing.T) {
	s, _ := newStore(t)
	th := sampleThread("thread-1")
	mustSave(t, s, th)
	p, _ := s.Path("thread-1")
	data, _ := os.ReadFile(p)
	data = bytes.Replace(data, []byte(`"id": "allow"`), []byte(`"id": "allow", "weight": 1.0, "big": 12345678901234567890`), 1)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	mustSave(t, s, mustLoad(t, s, "thread-1"))
	data, _ = os.ReadFile(p)
	if !bytes.Contains(data, []byte(`"weight": 1.0`)) || !bytes.Contains(data, []byte(`"big": 12345678901234567890`)) {
		t.Fatalf("numbers rewritten:\n%s", data)
	}
}
