package cdp

import (
	"fmt"
	"os/exec"
)

// startDetached starts the opener with no stdin, stdout or stderr (nothing
// it prints reaches fillgate's output) and reaps it in the background. The
// opener may outlive the request: it often starts the browser itself.
//
// The URL is in the opener's argv, which other processes of the same user
// can read while it runs; README explains what that means.
func startDetached(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
