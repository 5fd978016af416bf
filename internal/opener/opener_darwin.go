package opener

import "strings"

// osLauncher is open(1), found in /usr/bin only.
func osLauncher(environ []string) launcher {
	return launcher{
		dirs: []string{"/usr/bin"},
		name: "open",
		args: func(path string) []string { return []string{path} },
		env:  minimalEnv(environ, keepDesktopVar, "/usr/bin:/bin:/usr/sbin:/sbin"),
	}
}

// keepDesktopVar reports whether open(1) and the browser it starts need
// variable name.
func keepDesktopVar(name string) bool {
	switch name {
	case "HOME", "USER", "LOGNAME", "TMPDIR", "LANG", "__CF_USER_TEXT_ENCODING":
		return true
	}
	return strings.HasPrefix(name, "LC_") || strings.HasPrefix(name, "XDG_")
}
