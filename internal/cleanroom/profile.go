package cleanroom

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fillgate/fillgate/internal/browserproc"
)

// A room's profile is a directory of its own under the rooms' directory,
// named at random, with a lock file beside it (NAME.lock) that the room
// holds while it lives. Whoever makes a room first removes the profiles
// whose lock nobody holds: rooms whose owner was killed before it could
// remove them. The rooms' directory is under fillgate's runtime
// directory, which only the user can open (and which the system empties
// at logout on Linux).

// newProfile makes a room's profile directory (0700) under dir, holding
// its lock, after sweeping the profiles left by dead owners. done removes
// the profile and releases the lock.
func newProfile(dir string) (path string, done func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", nil, err
	}
	sweep(dir)
	var b [12]byte
	_, _ = rand.Read(b[:])
	name := "room-" + hex.EncodeToString(b[:])
	path = filepath.Join(dir, name)
	unlock, err := lock(path + ".lock")
	if err != nil {
		return "", nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		unlock()
		_ = os.Remove(path + ".lock")
		return "", nil, err
	}
	// The lock is let go before its file is removed: Windows removes no
	// file a process holds open. Names are never reused, so a sweep that
	// takes the lock in between only removes what is already going.
	return path, func() {
		_ = removeAll(path)
		unlock()
		_ = os.Remove(path + ".lock")
	}, nil
}

// sweep removes the profiles under dir whose lock nobody holds.
func sweep(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, "room-") {
			continue
		}
		path := filepath.Join(dir, name)
		unlock, err := tryLock(path + ".lock")
		if errors.Is(err, errLocked) {
			continue // a live room
		}
		killLeftovers(path)
		browserproc.RemoveSingleton(path)
		_ = removeAll(path)
		if unlock != nil {
			unlock()
		}
		_ = os.Remove(path + ".lock")
	}
}

// errLocked is tryLock's error for a lock another process holds.
var errLocked = errors.New("locked")

// removeAll removes path, trying again for a moment: a browser's helper
// processes can still write into it as they go.
func removeAll(path string) error {
	var err error
	for range 20 {
		if err = os.RemoveAll(path); err == nil {
			return nil
		}
		sleepABit()
	}
	return err
}
