package fence

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

var owner2 = map[string]any{"sandboxId": "sb-2", "activationId": "act-2", "runId": "run-2", "leaseId": "lease-2"}

func canon(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	o, err := CanonicalOwner(v)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// helperEnv runs TestHelperWriter as the child process of
// TestWriteSerialisesProcesses.
const helperEnv = "IAC_CODE_AGUI_FENCE_HELPER"

// TestHelperWriter is not a test: in a child process it increments the
// counter file n times, each read-modify-write inside the fence.
func TestHelperWriter(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("child process only")
	}
	var p struct {
		Root, File string
		N          int
	}
	if err := json.Unmarshal([]byte(spec), &p); err != nil {
		t.Fatal(err)
	}
	f := New(p.Root)
	for i := 0; i < p.N; i++ {
		if err := f.Write(ThreadKey("thread-1"), 0, func() error { return increment(p.File) }); err != nil {
			t.Fatal(err)
		}
	}
}

// increment adds one to the number in file, in two separate steps, so
// that two unsynchronised writers lose updates.
func increment(file string) error {
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	n, _ := strconv.Atoi(string(b))
	return os.WriteFile(file, []byte(strconv.Itoa(n+1)), 0o600)
}

// TestWriteSerialisesProcesses: two processes writing one thread under the
// fence never interleave a read-modify-write (protocol.md §8.9).
func TestWriteSerialisesProcesses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "counter")
	const n = 150
	spec, _ := json.Marshal(map[string]any{"Root": filepath.Join(dir, "handoff-control"), "File": file, "N": n})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
			cmd.Env = append(os.Environ(), helperEnv+"="+string(spec))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("%v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != strconv.Itoa(2*n) {
		t.Fatalf("counter %s, want %d", b, 2*n)
	}
}

// TestHandOverEpochs walks one key through a hand-over: the source is
// frozen and its writers stale; the destination's epoch moves on and binds
// the target owner.
func TestHandOverEpochs(t *testing.T) {
	src, dst := New(t.TempDir()), New(t.TempDir())
	key := ThreadKey("thread-1")
	owner1 := canon(t, map[string]any{"sandboxId": "sb-1", "activationId": "act-1", "runId": "run-1", "leaseId": "lease-1"})
	if err := src.Admit(key, owner1); err != nil {
		t.Fatal(err)
	}
	if err := src.Write(key, 0, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if ok, err := src.Quiesce(key, "m-1", 1); !ok || err != nil {
		t.Fatalf("quiesce %v %v", ok, err)
	}
	if ok, _ := src.Quiesce(key, "m-1", 1); !ok {
		t.Fatal("a repeated quiesce of the same migration is refused")
	}
	if err := src.Write(key, 0, func() error { return nil }); !errors.Is(err, ErrStale) {
		t.Fatalf("stale writer: %v", err)
	}
	if e, _ := src.Epoch(key); e != 1 {
		t.Fatalf("source epoch %d", e)
	}
	if err := src.Write(key, 1, func() error { return nil }); !errors.Is(err, ErrFrozen) {
		t.Fatalf("frozen source: %v", err)
	}
	if err := src.Admit(key, owner1); !errors.Is(err, ErrFrozen) {
		t.Fatalf("admission on the frozen source: %v", err)
	}

	if err := dst.WaitCommit(key, "m-1", 1); err != nil {
		t.Fatal(err)
	}
	if err := dst.Admit(key, canon(t, owner2)); !errors.Is(err, ErrFrozen) {
		t.Fatalf("admission before authorize: %v", err)
	}
	if err := dst.Authorize(key, "m-1", 1, "commit-1", canon(t, owner2)); err != nil {
		t.Fatal(err)
	}
	if err := dst.Authorize(key, "m-1", 1, "commit-1", canon(t, owner2)); err != nil {
		t.Fatalf("a repeated authorize: %v", err)
	}
	if e, _ := dst.Epoch(key); e != 1 {
		t.Fatalf("destination epoch %d", e)
	}
	if err := dst.Admit(key, owner1); !errors.Is(err, ErrOwner) {
		t.Fatalf("the old owner on the destination: %v", err)
	}
	if err := dst.Admit(key, canon(t, owner2)); err != nil {
		t.Fatal(err)
	}
	if err := dst.Write(key, 1, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if o, _ := dst.Owner(key); o["sandboxId"] != "sb-2" || o["identityKind"] != "slot" {
		t.Fatalf("owner %v", o)
	}
}

// TestUnverifiableBarrier: a barrier file that is not one refuses every
// write.
func TestUnverifiableBarrier(t *testing.T) {
	f := New(t.TempDir())
	key := ThreadKey("t")
	path, _ := f.paths(key)
	_ = os.MkdirAll(f.root, 0o700)
	for _, body := range []string{`[]`, `{"phase":"OPEN","operations":{}}`, `{"phase":"ACTIVE","epoch":-1,"writerCounter":0,"operations":{}}`,
		`{"phase":"PREPARING","epoch":1,"writerCounter":3,"sourceCounter":0,"operations":{}}`} {
		_ = os.WriteFile(path, []byte(body), 0o600)
		if err := f.Write(key, 0, func() error { return nil }); !errors.Is(err, ErrUnverifiable) {
			t.Fatalf("%s: %v", body, err)
		}
	}
}

// TestDisabled: the nil fence allows everything and reads epoch 0.
func TestDisabled(t *testing.T) {
	var f *Fence
	called := false
	if err := f.Write("k", 5, func() error { called = true; return nil }); err != nil || !called {
		t.Fatal("disabled write")
	}
	if err := f.Admit("k", nil); err != nil {
		t.Fatal(err)
	}
	if FromEnv(func(string) string { return "" }, "/x") != nil || FromEnv(func(string) string { return "/shared" }, "/cfg").Root() != "/cfg/handoff-control" {
		t.Fatal("FromEnv")
	}
}

func TestCanonicalOwner(t *testing.T) {
	ok := []map[string]any{
		owner2,
		{"sandbox_id": "s", "activation_id": "a", "run_id": "r", "lease_id": "l"},
		{"sandboxId": "s", "runId": "r", "identityKind": "legacy", "quotaLeaseId": "q"},
	}
	for _, v := range ok {
		if _, err := CanonicalOwner(v); err != nil {
			t.Errorf("%v: %v", v, err)
		}
	}
	bad := []any{
		nil, "sb-2", map[string]any{},
		map[string]any{"sandboxId": "s", "runId": "r"}, // slot without activation and lease
		map[string]any{"sandboxId": "s", "runId": "r", "identityKind": "legacy"},
		map[string]any{"sandboxId": "s", "activationId": "a", "runId": "r", "leaseId": "l", "extra": "x"},
		map[string]any{"sandboxId": 1, "activationId": "a", "runId": "r", "leaseId": "l"},
		map[string]any{"sandboxId": "s", "sandbox_id": "s", "activationId": "a", "runId": "r", "leaseId": "l"},
	}
	for _, v := range bad {
		if _, err := CanonicalOwner(v); err == nil {
			t.Errorf("%v accepted", v)
		}
	}
	got := canon(t, owner2)
	b, _ := json.Marshal(got)
	if string(b) != `{"activationId":"act-2","identityKind":"slot","leaseId":"lease-2","quotaLeaseId":null,"runId":"run-2","sandboxId":"sb-2"}` {
		t.Fatalf("canonical %s", b)
	}
}
