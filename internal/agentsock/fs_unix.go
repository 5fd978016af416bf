//go:build !windows

package agentsock

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive flock on path without waiting; it returns
// errLocked when another process holds it.
func tryLock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

// isRefused reports whether a dial failed because nothing listens on the
// socket file: the mark of a socket its owner left behind.
func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// restrict makes a socket file reachable by its owner only.
func restrict(path string) error { return os.Chmod(path, 0o600) }
