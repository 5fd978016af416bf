package pinentry

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own with no console
// window. (Windows has no process-group kill: killGroup ends the program
// itself; a pinentry that started helpers leaves them to end with it.)
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | createNoWindow}
}

// createNoWindow is CREATE_NO_WINDOW: no console for the program.
const createNoWindow = 0x08000000

// killGroup kills the program.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
