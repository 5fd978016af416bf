package keychain

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/godbus/dbus/v5"
)

// The Secret Service on D-Bus, as go-keyring uses it.
const (
	ssName         = "org.freedesktop.secrets"
	ssPath         = dbus.ObjectPath("/org/freedesktop/secrets")
	ssLogin        = dbus.ObjectPath("/org/freedesktop/secrets/collection/login")
	ssDefault      = dbus.ObjectPath("/org/freedesktop/secrets/aliases/default")
	propertiesGet  = "org.freedesktop.DBus.Properties.Get"
	ssServiceIface = "org.freedesktop.Secret.Service"
	ssCollIface    = "org.freedesktop.Secret.Collection"
)

// startFix says how to get a Secret Service running.
const startFix = "run fillgate inside your desktop session (GNOME Keyring, KDE Wallet 5.97+ or KeePassXC with its Secret Service integration on), " +
	"or start one with dbus-run-session and gnome-keyring-daemon"

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
	return &Unavailable{Reason: "cannot be reached: there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset), so no Secret Service", Fix: startFix}
}

// usable checks, without asking anyone, that a Secret Service runs and
// that the collection go-keyring uses (login, else the default alias) is
// unlocked. go-keyring itself would ask the Secret Service to unlock a
// locked collection, which shows a prompt in the desktop (or, with no
// desktop, waits forever); fillgate says what to do instead.
func usable(ctx context.Context) error {
	if err := sessionBus(); err != nil {
		return err
	}
	conn, err := dbus.SessionBus()
	if err != nil {
		return &Unavailable{Reason: "cannot be reached: " + err.Error(), Fix: startFix}
	}
	var colls dbus.Variant
	err = conn.Object(ssName, ssPath).CallWithContext(ctx, propertiesGet, dbus.FlagNoAutoStart, ssServiceIface, "Collections").Store(&colls)
	if err != nil {
		var de dbus.Error
		if errors.As(err, &de) && (de.Name == "org.freedesktop.DBus.Error.ServiceUnknown" || de.Name == "org.freedesktop.DBus.Error.NameHasNoOwner") {
			return &Unavailable{Reason: "is not running (no Secret Service on the session bus)", Fix: startFix}
		}
		return &Unavailable{Reason: "did not answer: " + err.Error(), Fix: startFix}
	}
	coll := ssDefault
	if paths, ok := colls.Value().([]dbus.ObjectPath); ok && slices.Contains(paths, ssLogin) {
		coll = ssLogin
	}
	var locked dbus.Variant
	err = conn.Object(ssName, coll).CallWithContext(ctx, propertiesGet, dbus.FlagNoAutoStart, ssCollIface, "Locked").Store(&locked)
	if err != nil {
		return &Unavailable{Reason: fmt.Sprintf("has no login or default keyring (%v)", err),
			Fix: "create one: open Passwords and Keys (Seahorse) and add a keyring, then make it the default"}
	}
	if l, ok := locked.Value().(bool); !ok || l {
		return &Unavailable{Reason: "is locked",
			Fix: "unlock it: log in to your desktop session, or open Passwords and Keys (Seahorse) and unlock the Login keyring, or run `gnome-keyring-daemon --unlock` and type its password"}
	}
	return nil
}
