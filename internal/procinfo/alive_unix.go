//go:build !windows

package procinfo

import (
	"errors"

	"golang.org/x/sys/unix"
)

func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	// EPERM: it exists but belongs to someone else.
	return err == nil || errors.Is(err, unix.EPERM)
}
