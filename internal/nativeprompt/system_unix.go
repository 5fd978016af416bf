//go:build unix && !darwin

package nativeprompt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// searchDirs are the system's own directories a pinentry is looked for in
// (never $PATH: on the CDP path fillgate runs with the agent's
// environment, and a fake pinentry on its PATH would approve for it).
func searchDirs() []string { return []string{"/usr/bin", "/usr/local/bin", "/bin"} }

// pinentryNames are the pinentries looked for, in order: the system's
// default (when it is a graphical one), then each graphical one.
func pinentryNames() []string {
	return []string{"pinentry", "pinentry-gtk-2", "pinentry-qt", "pinentry-qt5", "pinentry-qt6",
		"pinentry-gnome3", "pinentry-fltk", "pinentry-x11", "pinentry-gtk"}
}

// platform is a graphical pinentry on the person's display.
func platform(cfg Config) (backend, error) {
	return unixPlatform(cfg, searchDirs(), trusted)
}

// unixPlatform picks the pinentry for cfg among dirs.
func unixPlatform(cfg Config, dirs []string, trusted func(link, resolved string) error) (backend, error) {
	getenv := cfg.Env
	x11, wayland := getenv("DISPLAY") != "", getenv("WAYLAND_DISPLAY") != ""
	if !x11 && !wayland {
		return nil, errors.New("no desktop display: DISPLAY and WAYLAND_DISPLAY are unset, so fillgate runs " +
			"outside a desktop session here and can show no dialog; run the agent (for the CDP path) and the " +
			"browser from your desktop session")
	}
	env := dialogEnv(getenv)
	if cfg.Program != "" {
		p, err := namedProgram(cfg.Program)
		if err != nil {
			return nil, err
		}
		if trustErr := trusted(cfg.Program, p); trustErr != nil {
			cfg.Logger.Warn("the policy's pinentry is not root's alone: a program of yours could replace it", "pinentry", p, "why", trustErr.Error())
		}
		return newPinentry(p, env), nil
	}
	// pinentry-gnome3 asks through GNOME's own prompter (gcr); elsewhere
	// it falls back to the terminal, which fillgate never gives it, and
	// fails. So it is used only in a GNOME session with its bus.
	bus := getenv("DBUS_SESSION_BUS_ADDRESS") != "" || isSocket(getenv("XDG_RUNTIME_DIR"), "bus")
	gnome := bus && strings.Contains(strings.ToUpper(getenv("XDG_CURRENT_DESKTOP")), "GNOME")
	usable := func(base string) bool {
		switch base {
		case "pinentry-gtk-2", "pinentry-gtk", "pinentry-fltk", "pinentry-x11":
			return x11
		case "pinentry-qt", "pinentry-qt5", "pinentry-qt6":
			return x11 || wayland
		case "pinentry-gnome3":
			return (x11 || wayland) && gnome
		}
		return false
	}
	if p := findTrusted(dirs, pinentryNames(), usable, trusted); p != "" {
		return newPinentry(p, env), nil
	}
	need := "pinentry-gtk-2, pinentry-qt, pinentry-fltk, or pinentry-gnome3 in a GNOME session"
	if !x11 {
		need = "pinentry-qt, or pinentry-gnome3 in a GNOME session (this Wayland session has no DISPLAY for the others)"
	}
	return nil, fmt.Errorf("no graphical pinentry in %s (%s); install one (apt install pinentry-gtk2, "+
		"or pinentry-qt on Wayland), or %s", strings.Join(dirs, ", "), need, policyFix)
}

// isSocket reports whether dir/name is a socket (dir "" is none).
func isSocket(dir, name string) bool {
	if dir == "" {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, name))
	return err == nil && fi.Mode()&os.ModeSocket != 0
}
