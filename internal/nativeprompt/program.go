package nativeprompt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// dialogEnvKeys are the variables a dialog program gets from fillgate's
// environment, when set: what it needs to reach the desktop and speak
// the person's language, and nothing else (no secret, no PATH, no TERM).
var dialogEnvKeys = [...]string{
	"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP",
	"HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
	"TMPDIR", "SYSTEMROOT", "WINDIR", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TEMP", "TMP",
}

// dialogEnv is the whole environment of a dialog program.
func dialogEnv(getenv func(string) string) []string {
	env := []string{}
	for _, k := range dialogEnvKeys {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// policyFix is how to name a pinentry in the policy.
const policyFix = `name one in the policy: pinentry = "/path/to/pinentry"`

// namedProgram checks the policy's pinentry: an absolute path to an
// executable regular file that is no terminal pinentry. It returns the
// path with symbolic links resolved.
func namedProgram(program string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("the policy's pinentry = %q %s; fix or remove the policy's pinentry key", program, why)
	}
	if !filepath.IsAbs(program) {
		return bad("is not an absolute path")
	}
	resolved, err := filepath.EvalSymlinks(program)
	if err != nil {
		return bad("cannot be used: " + err.Error())
	}
	fi, err := os.Stat(resolved)
	switch {
	case err != nil:
		return bad("cannot be used: " + err.Error())
	case !fi.Mode().IsRegular():
		return bad("is not a program")
	case !executable(fi):
		return bad("is not executable")
	case isTerminal(filepath.Base(resolved)):
		return bad("is a terminal pinentry, which whatever drives the terminal could answer; name a graphical one (pinentry-gtk-2, pinentry-qt, pinentry-gnome3)")
	}
	return resolved, nil
}

// isTerminal reports whether a pinentry's file name is a terminal one.
func isTerminal(base string) bool {
	base = strings.ToLower(strings.TrimSuffix(base, ".exe"))
	return strings.Contains(base, "curses") || strings.Contains(base, "tty")
}
