//go:build unix && !linux

package browserproc

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that stopping it
// also stops the browser's helpers and the native hosts it started. (Only
// Linux can have the kernel kill it when its owner dies.)
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
