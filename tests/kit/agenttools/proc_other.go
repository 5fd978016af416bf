//go:build unix && !linux

package agenttools

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so killGroup also
// reaches the servers it started. (Only Linux has a parent-death signal;
// elsewhere the driver ends its servers when its input closes.)
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
