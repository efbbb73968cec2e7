package state

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestRecordRunKeepsTheNewestRuns(t *testing.T) {
	th := sampleThread("thread-1")
	for i := range MaxRunDigests + 5 {
		th.RecordRun(fmt.Sprintf("run-%d", i), hex64('d'))
	}
	if len(th.RunDigests) != MaxRunDigests || len(th.RunOrder) != MaxRunDigests {
		t.Fatalf("%d digests, %d ordered", len(th.RunDigests), len(th.RunOrder))
	}
	// run-1 (from sampleThread) and run-0..run-4 were the oldest.
	for _, gone := range []string{"run-0", "run-4"} {
		if _, ok := th.RunDigests[gone]; ok {
			t.Errorf("%s kept", gone)
		}
	}
	if th.RunOrder[0] != "run-5" || th.RunOrder[MaxRunDigests-1] != fmt.Sprintf("run-%d", MaxRunDigests+4) {
		t.Fatalf("order %v … %v", th.RunOrder[0], th.RunOrder[MaxRunDigests-1])
	}
	// The order survives a save and a load.
	s := newStore(t)
	mustSave(t, s, th)
	got := mustLoad(t, s, "thread-1")
	if !slices.Equal(got.RunOrder, th.RunOrder) {
		t.Fatal("runOrder changed through save and load")
	}
}

func TestLoadTrimsAnOverlongHistory(t *testing.T) {
	th := sampleThread("thread-1")
	for i := range MaxRunDigests + 10 {
		th.RunDigests[fmt.Sprintf("x-%05d", i)] = hex64('e')
	}
	th.RunOrder = nil // as the original writes it: no order, all count as older
	data, err := Encode(th)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, "thread-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.RunDigests) != MaxRunDigests || got.RunOrder[len(got.RunOrder)-1] != "x-01009" {
		t.Fatalf("%d digests, newest %s", len(got.RunDigests), got.RunOrder[len(got.RunOrder)-1])
	}
}

// TestSaveRefusesWhatLoadWouldRefuse: a document past MaxDocumentSize is
// never written (issue 15 finding 6).
func TestSaveRefusesWhatLoadWouldRefuse(t *testing.T) {
	s := newStore(t)
	th := sampleThread("thread-1")
	mustSave(t, s, th)
	big := th.Clone()
	long := strings.Repeat("r", 20_000)
	for i := range MaxRunDigests {
		big.RecordRun(fmt.Sprintf("%s-%d", long, i), hex64('f'))
	}
	_, rev, err := s.Load(context.Background(), "thread-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(context.Background(), big, rev); !errors.Is(err, ErrInvalidDocument) {
		t.Fatalf("Save of a %d-run document with 20,000-byte ids: %v", len(big.RunDigests), err)
	}
	if got := mustLoad(t, s, "thread-1"); len(got.RunDigests) != 1 {
		t.Fatalf("stored document changed: %d runs", len(got.RunDigests))
	}
	if _, err := Encode(big); !errors.Is(err, ErrInvalidDocument) {
		t.Fatalf("Encode: %v", err)
	}
}
