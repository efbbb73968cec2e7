package gcpace

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, headroom uint64
		want           int
	}{
		{0, Headroom, 100},            // before the first collection
		{1 * mib, Headroom, 1600},     // 6,400 capped where the runtime's minimum reaches 64 MiB
		{4 * mib, Headroom, 1600},     // exactly the cap
		{8 * mib, Headroom, 800},      // goal 8 + 64 MiB
		{32 * mib, Headroom, 200},     // goal 32 + 64 MiB
		{48 * mib, Headroom, 133},     // rounded down
		{64 * mib, Headroom, 100},     // from the headroom on: GOGC=100
		{1 << 30, Headroom, 100},      // large heaps keep the default
		{Headroom - 1, Headroom, 100}, // 100.000…1 rounds down to the default
		{1 * mib, 16 * mib, 400},      // a 128 MiB container: capped at 16 MiB's minimum
		{8 * mib, 16 * mib, 200},      // goal 8 + 16 MiB
		{1 * mib, 4 * mib, 100},       // no headroom beyond the runtime's own minimum
	} {
		if got := Percent(c.live, c.headroom); got != c.want {
			t.Errorf("Percent(%d MiB, %d MiB) = %d, want %d", c.live/mib, c.headroom/mib, got, c.want)
		}
	}
}

func TestHeadroomFor(t *testing.T) {
	for _, c := range []struct{ limit, want uint64 }{
		{0, Headroom},           // no limit
		{16 << 30, Headroom},    // a large limit: the fixed headroom
		{512 << 20, 64 << 20},   // an eighth is exactly the headroom
		{256 << 20, 32 << 20},   // an eighth
		{128 << 20, 16 << 20},   // an eighth
		{(1 << 20) + 7, 131072}, // rounds down
	} {
		if got := HeadroomFor(c.limit); got != c.want {
			t.Errorf("HeadroomFor(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}

// TestMemoryLimit reads limits from cgroup files written under a temporary
// root: a real cgroup limit cannot be set without privileges, so the
// files stand in for /proc and /sys (their formats are the kernel's).
func TestMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  uint64
	}{
		{"v2 limit", map[string]string{
			"proc/self/cgroup":                          "0::/kubepods/pod1/c1\n",
			"sys/fs/cgroup/kubepods/pod1/c1/memory.max": "268435456\n",
		}, 256 << 20},
		{"v2 no limit", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "max\n",
		}, 0},
		{"v2 in a cgroup namespace: the mount's root", map[string]string{
			"proc/self/cgroup":         "0::/../../outside\n",
			"sys/fs/cgroup/memory.max": "536870912\n",
		}, 512 << 20},
		{"v1 limit", map[string]string{
			"proc/self/cgroup": "9:name=systemd:/\n4:memory:/docker/abc\n0::/\n",
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "1073741824\n",
		}, 1 << 30},
		{"v1 unlimited", map[string]string{
			"proc/self/cgroup": "4:memory:/process_api/x\n",
			"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": "9223372036854771712\n",
		}, 0},
		{"v1 with joined controllers", map[string]string{
			"proc/self/cgroup": "3:cpu,memory:/a\n",
			"sys/fs/cgroup/memory/a/memory.limit_in_bytes": "134217728\n",
		}, 128 << 20},
		{"no cgroup file", map[string]string{}, 0},
		{"garbage", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "lots\n",
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for name, body := range c.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := MemoryLimit(root); got != c.want {
				t.Fatalf("MemoryLimit = %d, want %d", got, c.want)
			}
		})
	}
}

// gogc reads the collector's current GOGC as the runtime reports it.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitGOGC collects until the runtime's GOGC satisfies ok, for up to 10 s:
// the pacing runs on the cleanup goroutine after a collection.
func waitGOGC(t *testing.T, ok func(uint64) bool) uint64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if g := gogc(); ok(g) || time.Now().After(deadline) {
			return g
		}
	}
}

var sink []byte

func TestStartPacesSmallAndLargeHeaps(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set in this test's environment; TestRespectsGOGC covers that case")
	}
	if HeadroomFor(MemoryLimit("/")) <= runtimeMinimum {
		t.Skip("this test runs under a memory limit of 32 MiB or less: no pacing")
	}
	if !Start() {
		t.Fatal("Start() = false with GOGC unset")
	}
	defer stop()
	// This test binary's live heap is a few MiB: the goal is live plus the
	// headroom (64 MiB unless the test runs under a memory limit).
	capped := uint64(Percent(1, headroom))
	if g := waitGOGC(t, func(g uint64) bool { return g > 100 }); g <= 100 || g > capped {
		t.Fatalf("GOGC %d with a small live heap, want 101..%d", g, capped)
	}
	// A live heap over the headroom brings the default back.
	sink = make([]byte, headroom+32<<20)
	for i := range sink {
		sink[i] = 1 // touched, so it is live memory the collector scans past
	}
	if g := waitGOGC(t, func(g uint64) bool { return g == 100 }); g != 100 {
		t.Fatalf("GOGC %d with a live heap over the headroom, want 100", g)
	}
	sink = nil
	if g := waitGOGC(t, func(g uint64) bool { return g > 100 }); g <= 100 {
		t.Fatalf("GOGC %d after the large heap was freed, want over 100", g)
	}
}

// TestRespectsGOGC runs this test binary again with GOGC=150: Start must
// leave the operator's setting alone through collections.
func TestRespectsGOGC(t *testing.T) {
	if os.Getenv("GCPACE_CHILD") == "1" {
		if Start() {
			t.Fatal("Start() = true with GOGC=150 set")
		}
		for range 5 {
			sink = make([]byte, 8<<20)
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
		if g := gogc(); g != 150 {
			t.Fatalf("GOGC %d after collections, want the environment's 150", g)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestRespectsGOGC$", "-test.v")
	cmd.Env = append(os.Environ(), "GOGC=150", "GCPACE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRespectsGOGC") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
