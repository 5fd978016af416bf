package remember

import "golang.org/x/sys/unix"

// The termios ioctls.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
