package state

import (
	"reflect"
	"testing"
	"unsafe"
)

func TestCompactedIsEqualAndShared(t *testing.T) {
	orig := sampleThread("thread-1")
	want := sampleThread("thread-1")
	c := orig.Compacted()
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("compacted copy differs:\n%+v\n%+v", c, orig)
	}
	for _, p := range [][2]string{
		{c.ThreadID, orig.ThreadID}, {c.ContextID, orig.ContextID}, {c.CWD, orig.CWD},
		{*c.UserID, *orig.UserID}, {c.Execution.ExecutionID, orig.Execution.ExecutionID},
		{c.RunOrder[0], orig.RunOrder[0]}, {c.AppliedResumeDigests[0].Digest, orig.AppliedResumeDigests[0].Digest},
	} {
		if unsafe.StringData(p[0]) == unsafe.StringData(p[1]) {
			t.Errorf("%q shares its bytes with the original", p[0])
		}
	}
	c.Execution.Pending["perm-1"].Value["kind"] = "x"
	c.RunDigests["run-1"] = "x"
	c.TerminalExecutionIDs[0] = "x"
	if !reflect.DeepEqual(orig, want) {
		t.Fatalf("mutating the copy changed the original:\n%+v", orig)
	}
	// Every field must be copied: a zero field in the sample would hide a
	// field Compacted forgets.
	v := reflect.ValueOf(*orig)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("sampleThread leaves %s zero", v.Type().Field(i).Name)
		}
	}
	empty := &Thread{RunOrder: []string{}}
	if got := empty.Compacted(); got.RunOrder == nil || got.TerminalExecutionIDs != nil {
		t.Errorf("nil and empty slices not kept apart: %#v", got)
	}
	if (*Thread)(nil).Compacted() != nil {
		t.Fatal("nil.Compacted() != nil")
	}
}
