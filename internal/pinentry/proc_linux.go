package pinentry

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a session of its own: a process group that
// killGroup ends, and no controlling terminal, so that no pinentry can
// fall back to asking on the terminal fillgate (or the agent) runs in.
// The kernel kills it if fillgate dies first (Pdeathsig; strictly, if the
// thread that started it exits, which Go's threads do not while fillgate
// runs).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
