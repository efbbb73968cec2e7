//go:build crashhook

package filestore

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
// write of a run can be the last one a crash interrupts, and can first
// drop what a power loss at that point may drop. Normal builds get the
// no-op in crashhook_off.go.
//
// IAC_CODE_AGUI_CRASH_AT="<n>:<phase>[:powerloss]" picks the n-th write
// (1-based, counted per process) and the point in it (atomic.go): "before"
// (nothing written yet), "written" (the temporary file written, not
// fsynced), "synced" (fsynced, not renamed), "renamed" (in place, the
// directory not fsynced) or "dirsynced" (durable, the save not yet
// answered). With ":powerloss" the hook first undoes what was not synced
// yet, as the worst case of a power loss: at "written" it cuts the
// temporary file to half its bytes, at "renamed" it puts the thread's old
// file back (removes the new one for a new thread) and leaves the new
// document in the temporary file. The hook says on stderr where it fires,
// so the test knows the kill was its.

var (
	crashWrites    atomic.Int64
	crashN         int64
	crashPhase     string
	crashPowerLoss bool
)

func init() {
	spec := strings.Split(os.Getenv("IAC_CODE_AGUI_CRASH_AT"), ":")
	if len(spec) < 2 {
		return
	}
	crashN, _ = strconv.ParseInt(spec[0], 10, 64)
	crashPhase = spec[1]
	crashPowerLoss = len(spec) > 2 && spec[2] == "powerloss"
}

// crashWrite is one counted write.
type crashWrite struct {
	n    int64
	path string
	old  []byte // the document path held before (power loss only)
	had  bool
}

// crashStart counts a write of path and returns it.
func crashStart(path string) crashWrite {
	w := crashWrite{n: crashWrites.Add(1), path: path}
	if w.n == crashN && crashPowerLoss {
		old, err := os.ReadFile(path)
		w.old, w.had = old, err == nil
	}
	w.at("before", "")
	return w
}

// at kills the process if w at phase is the chosen point; tmp is the
// write's temporary file.
func (w crashWrite) at(phase, tmp string) {
	if w.n != crashN || phase != crashPhase {
		return
	}
	if crashPowerLoss {
		if err := w.losePower(tmp); err != nil {
			fmt.Fprintf(os.Stderr, "crashhook: power loss at state write %d (%s): %v\n", w.n, phase, err)
			os.Exit(3)
		}
		phase += ", power loss"
	}
	fmt.Fprintf(os.Stderr, "crashhook: SIGKILL at state write %d (%s)\n", w.n, phase)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is delivered before anything else runs
}

// losePower drops the writes of w that were not synced at its phase.
func (w crashWrite) losePower(tmp string) error {
	switch crashPhase {
	case "written":
		fi, err := os.Stat(tmp)
		if err != nil {
			return err
		}
		return os.Truncate(tmp, fi.Size()/2)
	case "renamed":
		// The directory entry goes back to what it was: the new document
		// under its temporary name, the old one (or none) under the
		// thread's.
		if err := os.Link(w.path, tmp); err != nil {
			return err
		}
		if !w.had {
			return os.Remove(w.path)
		}
		back := tmp + ".old"
		if err := os.WriteFile(back, w.old, 0o600); err != nil {
			return err
		}
		return os.Rename(back, w.path)
	}
	return nil
}
