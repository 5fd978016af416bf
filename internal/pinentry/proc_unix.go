//go:build unix

package pinentry

import (
	"os/exec"
	"syscall"
)

// killGroup kills cmd's process group: the program and what it started.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
