// Package e2etest owns the pieces the end-to-end suites share: building the
// binary under test (TestMain, the long mode), a free loopback port, a buffer that collects a
// process's output from several goroutines, decoding an SSE answer, and
// reading one series of a /metrics exposition, and a Jaeger process for
// the tracing tests (jaeger.go).
//
// Only tests import it. It must not import the product's packages: the
// suites drive the built binary from outside, as a user would.
package e2etest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Build compiles the main package at dir (relative to the calling test's
// package, e.g. "../cmd/iac-code-agui") with the extra go build flags into
// a new temporary directory. It returns the binary and a function that
// removes the directory; the error carries the compiler's output.
func Build(dir string, flags ...string) (bin string, cleanup func(), err error) {
	tmp, err := os.MkdirTemp("", "iac-code-agui-bin")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	bin = filepath.Join(tmp, "iac-code-agui")
	args := append(append([]string{"build"}, flags...), "-o", bin, dir)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, cleanup, nil
}

// Main is a suite's TestMain: it builds the binary at dir with flags
// (see Build) into *bin, runs the tests and removes the binary. A build
// failure ends the process with status 1.
func Main(m *testing.M, bin *string, dir string, flags ...string) {
	b, cleanup, err := Build(dir, flags...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = b
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// Long reports the long mode (IAC_CODE_AGUI_LONG=1): the suites' bigger
// sizes, kept out of CI.
func Long() bool { return os.Getenv("IAC_CODE_AGUI_LONG") == "1" }

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Buffer is an io.Writer that several goroutines may write to and read
// from, such as a process's stdout and stderr pipes.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Events decodes the data lines of an SSE answer into JSON objects; a
// line that is not a JSON object is skipped.
func Events(b []byte) []map[string]any {
	var evs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev map[string]any
			if json.Unmarshal([]byte(line), &ev) == nil {
				evs = append(evs, ev)
			}
		}
	}
	return evs
}
