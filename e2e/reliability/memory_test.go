package reliability

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// hostileBody is a 12 MiB run whose extra top-level field is an array of
// small numbers (issue 15 finding 5).
func hostileBody(cwd string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"threadId":"t-mem","runId":"r","state":{},"tools":[],"context":[],"messages":[{"id":"m","role":"user","content":"hi"}],`+
		`"forwardedProps":{"iacCode":{"schemaVersion":1,"rosInvocationId":"i","cwd":%q}},"extra":[`, cwd)
	for b.Len() < 12<<20-16 {
		b.WriteString("1,")
	}
	b.WriteString("1]}")
	return b.Bytes()
}

// peakRSS reads a process's peak resident set size (VmHWM) in MiB.
func peakRSS(t testing.TB, pid int) float64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestLargeBodyMemoryIsBounded sends one, then four concurrent 12 MiB
// bodies of small numbers and checks the server's peak RSS. Before the
// streaming digest one such body raised RSS from 15 MB to 464 MB and four
// reached 1.76 GB; the bound below is what docs/reliability.md promises.
func TestLargeBodyMemoryIsBounded(t *testing.T) {
	s := startServer(t, serverOpts{})
	body := hostileBody(s.Root + "/ws")
	pid := s.cmd.Process.Pid
	base := peakRSS(t, pid)
	status, _, resp := post(t, s.URL, body)
	if status != 200 {
		t.Fatalf("12 MiB body: %d %.200s", status, resp)
	}
	one := peakRSS(t, pid)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := bytes.Replace(body, []byte(`"runId":"r"`), []byte(fmt.Sprintf(`"runId":"r%d"`, i)), 1)
			b = bytes.Replace(b, []byte(`"threadId":"t-mem"`), []byte(fmt.Sprintf(`"threadId":"t-mem-%d"`, i)), 1)
			if status, _, resp := post(t, s.URL, b); status != 200 {
				t.Errorf("concurrent 12 MiB body: %d %.200s", status, resp)
			}
		}()
	}
	wg.Wait()
	four := peakRSS(t, pid)
	t.Logf("peak RSS: start %.0f MiB, after one 12 MiB body %.0f MiB, after four concurrent %.0f MiB", base, one, four)
	if one > 150 || four > 400 {
		t.Fatalf("peak RSS %.0f MiB after one, %.0f MiB after four concurrent 12 MiB bodies", one, four)
	}
}
