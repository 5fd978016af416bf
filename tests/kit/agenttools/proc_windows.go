package agenttools

import "os/exec"

// ownGroup does nothing on Windows; the driver ends its servers when its
// input closes.
func ownGroup(*exec.Cmd) {}

// killGroup kills the driver.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
