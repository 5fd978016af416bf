//go:build unix

package browserproc

import (
	"os/exec"
	"syscall"
)

// signalGroup asks cmd's process group to exit, or kills it when force.
func signalGroup(cmd *exec.Cmd, force bool) {
	sig := syscall.SIGTERM
	if force {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
