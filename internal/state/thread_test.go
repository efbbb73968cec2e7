package state

import (
	"reflect"
	"slices"
	"testing"
)

func strp(s string) *string { return &s }

// sampleThread is a populated binding shared by the tests.
func sampleThread(threadID string) *Thread {
	t := NewThread(threadID, "/srv/iac/session-1", strp("user-1"), "exec-1", "ros-1")
	t.IacCodeSessionID = strp("session-1")
	t.Execution.TaskID = strp("task-1")
	t.Execution.PipelineSequence = 3
	t.Execution.PipelineOpenSteps = []string{"step:intent_parsing"}
	t.Execution.TextSnapshotDigests = []string{hex64('a')}
	t.Execution.Pending["perm-1"] = Pending{
		Value:    map[string]any{"inputId": "perm-1", "kind": "permission", "options": []any{map[string]any{"id": "allow"}}},
		Sideband: true,
	}
	t.RecordRun("run-1", hex64('b'))
	t.AddApplied("exec-0", "perm-0", hex64('c'))
	t.TerminalExecutionIDs = []string{"exec-0"}
	return t
}

func hex64(c byte) string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

func TestNewThread(t *testing.T) {
	th := NewThread("thread-1", "/w", nil, "exec-1", "ros-1")
	if th.SchemaVersion != 1 || th.ContextID != "agui-4b0a5fefc328e6b9257bc535e3c5d26fec36b52f" ||
		th.UserID != nil || th.Execution.ExecutionID != "exec-1" || th.Execution.RosInvocationID != "ros-1" ||
		th.Execution.Pending == nil || th.RunDigests == nil {
		t.Fatalf("NewThread = %+v", th)
	}
}

func TestCloneIsDeep(t *testing.T) {
	orig := sampleThread("thread-1")
	want := sampleThread("thread-1")
	c := orig.Clone()
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("clone differs:\n%+v\n%+v", c, orig)
	}
	*c.UserID = "other"
	*c.Execution.TaskID = "other"
	c.Execution.PipelineOpenSteps[0] = "x"
	c.Execution.TextSnapshotDigests[0] = "x"
	c.Execution.Pending["perm-1"].Value["kind"] = "x"
	c.Execution.Pending["perm-1"].Value["options"].([]any)[0].(map[string]any)["id"] = "x"
	c.RunDigests["run-1"] = "x"
	c.AppliedResumeDigests[0].Digest = "x"
	c.TerminalExecutionIDs[0] = "x"
	if !reflect.DeepEqual(orig, want) {
		t.Fatalf("mutating the clone changed the original:\n%+v", orig)
	}
	if (*Thread)(nil).Clone() != nil {
		t.Fatal("nil.Clone() != nil")
	}
}

func TestMarkTerminal(t *testing.T) {
	th := sampleThread("thread-1")
	th.MarkTerminal()
	if th.Execution.TaskID != nil || th.Execution.LastTaskID == nil || *th.Execution.LastTaskID != "task-1" {
		t.Fatalf("taskId=%v lastTaskId=%v", th.Execution.TaskID, th.Execution.LastTaskID)
	}
	if want := []string{"exec-0", "exec-1"}; !slices.Equal(th.TerminalExecutionIDs, want) {
		t.Fatalf("terminal = %v, want %v", th.TerminalExecutionIDs, want)
	}
	// A second call without a task keeps lastTaskId and does not duplicate.
	th.MarkTerminal()
	if *th.Execution.LastTaskID != "task-1" || len(th.TerminalExecutionIDs) != 2 {
		t.Fatalf("second MarkTerminal: lastTaskId=%v terminal=%v", *th.Execution.LastTaskID, th.TerminalExecutionIDs)
	}
}

func TestRotate(t *testing.T) {
	th := sampleThread("thread-1")
	th.Rotate("exec-2", "ros-2")
	e := th.Execution
	if e.ExecutionID != "exec-2" || e.RosInvocationID != "ros-2" || e.TaskID != nil || e.PipelineSequence != 0 ||
		len(e.PipelineOpenSteps) != 0 || len(e.TextSnapshotDigests) != 0 || len(e.Pending) != 0 {
		t.Fatalf("execution after Rotate = %+v", e)
	}
	if th.ContextID != ContextIDFor("thread-1") || th.IacCodeSessionID == nil || *th.IacCodeSessionID != "session-1" {
		t.Fatalf("context or session not kept: %q %v", th.ContextID, th.IacCodeSessionID)
	}
	// exec-1 still had task-1, so it is terminal now.
	if want := []string{"exec-0", "exec-1"}; !slices.Equal(th.TerminalExecutionIDs, want) {
		t.Fatalf("terminal = %v, want %v", th.TerminalExecutionIDs, want)
	}
	if th.RunDigests["run-1"] != hex64('b') {
		t.Fatal("run digests lost on rotation")
	}
}

func TestAppliedDigests(t *testing.T) {
	th := NewThread("thread-1", "/w", nil, "exec-1", "ros-1")
	if _, ok := th.AppliedDigest("exec-1", "perm-1"); ok {
		t.Fatal("unexpected digest on a new thread")
	}
	th.AddApplied("exec-2", "perm-1", "d1")
	th.AddApplied("exec-1", "perm-2", "d2")
	th.AddApplied("exec-1", "perm-1", "d3")
	th.AddApplied("exec-1", "perm-2", "d4") // replaces d2
	want := []AppliedDigest{{"exec-1", "perm-1", "d3"}, {"exec-1", "perm-2", "d4"}, {"exec-2", "perm-1", "d1"}}
	if !slices.Equal(th.AppliedResumeDigests, want) {
		t.Fatalf("applied = %v, want %v", th.AppliedResumeDigests, want)
	}
	if d, ok := th.AppliedDigest("exec-1", "perm-2"); !ok || d != "d4" {
		t.Fatalf("AppliedDigest = %q, %v", d, ok)
	}
}
