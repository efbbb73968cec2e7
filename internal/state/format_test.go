package state

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"testing"
)

// expectedSample is the document below as Python's
// json.dumps(indent=2, sort_keys=True, ensure_ascii=False) + "\n" writes it
// (generated once with the original's serialiser settings), plus our
// runOrder (protocol.md §6), which the original ignores.
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
  "runOrder": [
    "run-1",
    "run-2"
  ],
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
	if key, err := FileKey("会话-1"); err != nil || key != "aguiid~e4bc9ae8af9d2d31" {
		t.Fatalf("file key = %s, %v", key, err)
	}
	got, err := Encode(th)
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
	in, err := os.ReadFile("testdata/original-thread-1.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/original-thread-1.resaved.json")
	if err != nil {
		t.Fatal(err)
	}
	th, err := Decode(in, "thread-1")
	if err != nil {
		t.Fatal(err)
	}
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
	got, err := Encode(th)
	if err != nil {
		t.Fatal(err)
	}
	// Byte-equal to the original's serialisation, including "weight": 1.0,
	// plus our runOrder.
	if !bytes.Equal(got, want) {
		t.Fatalf("re-saved:\n%s\nwant:\n%s", got, want)
	}
}

func TestNumbersKeepTheirLiteral(t *testing.T) {
	data, err := Encode(sampleThread("thread-1"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"id": "allow"`), []byte(`"id": "allow", "weight": 1.0, "big": 12345678901234567890`), 1)
	th, err := Decode(data, "thread-1")
	if err != nil {
		t.Fatal(err)
	}
	if data, err = Encode(th); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"weight": 1.0`)) || !bytes.Contains(data, []byte(`"big": 12345678901234567890`)) {
		t.Fatalf("numbers rewritten:\n%s", data)
	}
}

func TestEncodeDecodeForOtherBackends(t *testing.T) {
	want := sampleThread("Thread-1")
	data, err := Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, "Thread-1")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode(Encode(t)) = %+v, %v", got, err)
	}
	if _, err := Decode(data, "thread-1"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Decode for another thread: %v", err)
	}
	want.SchemaVersion = 2
	if _, err := Encode(want); !errors.Is(err, ErrInvalidDocument) {
		t.Fatalf("Encode of schemaVersion 2: %v", err)
	}
}
