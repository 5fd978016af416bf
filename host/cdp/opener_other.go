//go:build !darwin && !windows

package cdp

import "strings"

// osLauncher is xdg-open, the freedesktop opener, found in the system's
// own directories only.
func osLauncher(environ []string) launcher {
	return launcher{
		dirs: []string{"/usr/bin", "/bin", "/usr/local/bin", "/run/current-system/sw/bin"},
		name: "xdg-open",
		args: func(path string) []string { return []string{path} },
		env:  minimalEnv(environ, keepDesktopVar, "/usr/local/bin:/usr/bin:/bin:/snap/bin:/run/current-system/sw/bin"),
	}
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
