//go:build unix

package cleanroom

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lock creates path and holds an exclusive lock on it until the returned
// func is called (or the process dies).
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { _ = f.Close() }, nil
}

// tryLock takes the lock at path if nobody holds it (errLocked if someone
// does); a missing lock file is no one's.
func tryLock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return func() { _ = f.Close() }, nil
}

func sleepABit() { time.Sleep(50 * time.Millisecond) }
