package remember

import "golang.org/x/sys/unix"

// The termios ioctls.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
