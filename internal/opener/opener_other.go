//go:build !darwin && !windows

package opener

import (
	"errors"
	"strings"
)

// osLauncher is xdg-open, the freedesktop opener, found in the system's
// own directories only.
func osLauncher(environ []string) launcher {
	return launcher{
		dirs:  []string{"/usr/bin", "/bin", "/usr/local/bin", "/run/current-system/sw/bin"},
		name:  "xdg-open",
		args:  func(path string) []string { return []string{path} },
		env:   minimalEnv(environ, keepDesktopVar, "/usr/local/bin:/usr/bin:/bin:/snap/bin:/run/current-system/sw/bin"),
		ready: desktopReady,
	}
}

// desktopReady refuses a session with no display for a browser window:
// there xdg-open finds no graphical browser (at best a text-mode one,
// which a detached opener cannot show), and the prompt would stand unseen
// for its whole budget.
func desktopReady(env []string) error {
	for _, kv := range env {
		name, v, _ := strings.Cut(kv, "=")
		if (name == "DISPLAY" || name == "WAYLAND_DISPLAY") && v != "" {
			return nil
		}
	}
	return errors.New("no desktop session here: neither DISPLAY nor WAYLAND_DISPLAY is set")
}

// keepDesktopVar reports whether xdg-open needs variable name to reach
// the user's desktop and its default browser.
func keepDesktopVar(name string) bool {
	switch name {
	case "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE",
		"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS",
		"DESKTOP_SESSION", "KDE_FULL_SESSION", "KDE_SESSION_VERSION", "GNOME_DESKTOP_SESSION_ID":
		return true
	}
	return strings.HasPrefix(name, "XDG_") || strings.HasPrefix(name, "LC_")
}
