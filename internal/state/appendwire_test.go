package state

import (
	"bytes"
	"encoding/json"
	"testing"
)

// referenceWire is what encodeThread wrote before appendWire: encoding/json
// with HTML escaping off and a two-space indent.
func referenceWire(w *wireThread) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(w)
	return buf.Bytes(), err
}

func assertSameWire(t *testing.T, th *Thread) {
	t.Helper()
	w := wireOf(th)
	want, werr := referenceWire(w)
	got, gerr := appendWire(nil, w)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("errors differ: appendWire %v, encoding/json %v", gerr, werr)
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("appendWire wrote\n%s\nencoding/json writes\n%s", got, want)
	}
}

// TestAppendWireFull: a document with every member set, a pending
// interrupt with a nested value, several applied digests and runs, and
// strings that need escaping, comes out byte for byte as encoding/json
// writes it.
func TestAppendWireFull(t *testing.T) {
	user0 := "user-1"
	th := NewThread("thread-1", "/work/ws \"x\"", &user0, "exec-1", "inv-1")
	task, session, user := "task-\"1\"", "session-<1>&", "user-\u2028é"
	th.Execution.TaskID, th.Execution.LastTaskID = &task, &task
	th.IacCodeSessionID, th.UserID = &session, &user
	th.Execution.PipelineOpenSteps = []string{"step-b", "step-a", "step-a"}
	th.Execution.PipelineSequence = 42
	th.TerminalExecutionIDs = []string{"exec-9", "exec-0\t", ""}
	th.RunDigests = map[string]string{"run-2": "d2", "run-1": "d1", "run-\x01": "d\\3"}
	th.AppliedResumeDigests = []AppliedDigest{
		{ExecutionID: "exec-1", InterruptID: "in-2", Digest: "x"},
		{ExecutionID: "exec-1", InterruptID: "in-1", Digest: "y"},
	}
	th.Execution.Pending = map[string]Pending{
		"in-2": {Sideband: true, Value: map[string]any{"inputId": "in-2", "kind": "question", "options": []any{"a", json.Number("1.50"), nil, map[string]any{}}}},
		"in-1": {Value: map[string]any{"inputId": "in-1", "kind": "permission", "toolName": "ros_<deploy>", "args": map[string]any{"z": []any{}, "a": "\xff"}}},
	}
	assertSameWire(t, th)
	// The bare new thread: empty lists and maps, null ids.
	assertSameWire(t, NewThread("thread-2", "/w", nil, "exec-1", "inv-1"))
}

// FuzzAppendWire: for every document Decode accepts, appendWire writes
// the bytes encoding/json writes.
func FuzzAppendWire(f *testing.F) {
	addDocuments(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		th, err := Decode(data, "thread-1")
		if err != nil {
			return
		}
		assertSameWire(t, th)
	})
}
