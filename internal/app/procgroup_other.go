//go:build !unix

package app

import (
	"os"
	"os/exec"
	"syscall"
)

func ownGroup(*exec.Cmd) {}

// signalGroup falls back to the child alone where process groups do not
// exist; termination becomes a kill.
func signalGroup(cmd *exec.Cmd, _ syscall.Signal) error { return cmd.Process.Signal(os.Kill) }
