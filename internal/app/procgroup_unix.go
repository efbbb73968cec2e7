//go:build unix

package app

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the child in its own process group, so that signals
// reach a wrapper's own children too (an `iac-code` launcher script that
// does not exec its interpreter).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup signals the child's whole process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	return syscall.Kill(-cmd.Process.Pid, sig)
}
