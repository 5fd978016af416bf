package keychain

import (
	"errors"
	"os"
	"path/filepath"
)

// sessionBus checks that a D-Bus session bus is there before go-keyring is
// asked: without one, the D-Bus library would autolaunch a bus (and a
// keyring daemon with it) that outlives the command.
func sessionBus() error {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return nil
	}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		if fi, err := os.Stat(filepath.Join(rt, "bus")); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return nil
		}
	}
	return errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset), so no Secret Service: " +
		"run fillgate inside your desktop session, or start one with dbus-run-session and gnome-keyring-daemon")
}
