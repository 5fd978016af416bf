package storecmd

import "os/exec"

// ownGroup does nothing on Windows; killGroup kills the program itself.
func ownGroup(*exec.Cmd) {}

// killGroup kills the program.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
