package browserproc

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that stopping it
// also stops the browser's helpers and the native hosts it started, and
// has the kernel kill it if this process dies first (even by SIGKILL),
// so nothing outlives its owner.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
