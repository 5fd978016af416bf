//go:build unix && !linux

package pinentry

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a session of its own: a process group that
// killGroup ends, and no controlling terminal, so that no pinentry can
// fall back to asking on the terminal fillgate (or the agent) runs in.
// (Only Linux can have the kernel kill it when fillgate dies.)
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
