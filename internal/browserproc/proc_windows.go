package browserproc

import "os/exec"

// ownGroup does nothing on Windows: the browser's helpers exit with it.
func ownGroup(*exec.Cmd) {}

// signalGroup kills the browser process; Windows has no polite signal for
// it.
func signalGroup(cmd *exec.Cmd, _ bool) {
	_ = cmd.Process.Kill()
}
