//go:build unix

package agenttools

import (
	"os/exec"
	"syscall"
)

// killGroup kills cmd's whole process group: the driver and every server
// it started.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
