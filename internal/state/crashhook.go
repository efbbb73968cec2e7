//go:build crashhook

package state

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// The crash hook exists only in binaries built with -tags crashhook, for
// the crash-consistency suite of e2e/reliability (docs/reliability.md). It
// kills the process with SIGKILL at one chosen state write so that every
// write of a run can be the last one a crash interrupts. Normal builds get
// the no-op in crashhook_off.go.
//
// IAC_CODE_AGUI_CRASH_AT="<n>:<phase>" picks the n-th write (1-based,
// counted per process) and the point in it: "before" (nothing written
// yet), "temp" (the new document written and durable, its journal record
// synced or, without a journal, the file itself, not yet in place) or
// "renamed" (the document in place; without a journal, the directory not
// yet synced). The
// hook says on stderr where it fires, so the test knows the kill was its.

var (
	crashWrites atomic.Int64
	crashN      int64
	crashPhase  string
)

func init() {
	n, phase, ok := strings.Cut(os.Getenv("IAC_CODE_AGUI_CRASH_AT"), ":")
	if !ok {
		return
	}
	crashN, _ = strconv.ParseInt(n, 10, 64)
	crashPhase = phase
}

// crashStart counts a write and returns its number.
func crashStart() int64 {
	n := crashWrites.Add(1)
	crashPoint(n, "before")
	return n
}

// crashPoint kills the process if write n at phase is the chosen point.
func crashPoint(n int64, phase string) {
	if n != crashN || phase != crashPhase {
		return
	}
	fmt.Fprintf(os.Stderr, "crashhook: SIGKILL at state write %d (%s)\n", n, phase)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is delivered before anything else runs
}
