package browsertable

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fillgate/fillgate/internal/manifest"
)

// Vars is what a path template is expanded with: the OS whose paths it
// makes, its environment, and the family of the browser it is for.
type Vars struct {
	// OS is the table's column ("linux", "darwin" or "windows"); see
	// Column.
	OS string
	// Env reads the environment of that OS.
	Env func(string) string
	// Family is the browser's family; "" for paths that are not a
	// browser's own (fillgate's, a sandbox's).
	Family manifest.Family
	// Native makes paths of the machine this runs on (path/filepath),
	// whatever OS's column the templates come from: for paths read here.
	Native bool
}

// windowsDefaults are used when a Windows folder variable is unset.
var windowsDefaults = map[string]string{
	"ProgramFiles":      `C:\Program Files`,
	"ProgramFiles(x86)": `C:\Program Files (x86)`,
	"ProgramData":       `C:\ProgramData`,
}

// Home is the user's home directory on v's OS: USERPROFILE on Windows when
// set, else HOME.
func Home(v Vars) (string, error) {
	h := v.Env("HOME")
	if v.OS == "windows" && v.Env("USERPROFILE") != "" {
		h = v.Env("USERPROFILE")
	}
	if h == "" {
		return "", errors.New("cannot tell the home directory: set HOME")
	}
	return h, nil
}

// Expand turns a path template of the table (see Places) into a path of
// v's OS. "$XDG_CONFIG_HOME" is that variable when it is absolute, else
// ~/.config; a Chromium-family browser reads CHROME_CONFIG_HOME first, as
// Chromium on Linux does for its user data directory (and so for the
// NativeMessagingHosts folder inside it).
func Expand(tmpl string, v Vars) (string, error) {
	p := Path(v.OS)
	root, isAbs := "/", p.IsAbs
	join := func(base, rest string) string { return p.Join(base, rest) }
	if v.Native {
		root, isAbs = string(filepath.Separator), filepath.IsAbs
		join = func(base, rest string) string { return filepath.Join(base, filepath.FromSlash(rest)) }
	}
	head, rest, _ := strings.Cut(strings.ReplaceAll(tmpl, `\`, "/"), "/")
	var base string
	switch {
	case head == "":
		return join(root, rest), nil
	case head == "~":
		h, err := Home(v)
		if err != nil {
			return "", err
		}
		base = h
	case head == "$XDG_CONFIG_HOME":
		switch chrome, xdg := v.Env("CHROME_CONFIG_HOME"), v.Env("XDG_CONFIG_HOME"); {
		case v.Family == manifest.Chromium && chrome != "" && isAbs(chrome):
			base = chrome
		case xdg != "" && isAbs(xdg):
			base = xdg
		default:
			h, err := Home(v)
			if err != nil {
				return "", err
			}
			base = join(h, ".config")
		}
	case strings.HasPrefix(head, "%") && strings.HasSuffix(head, "%") && len(head) > 2:
		name := head[1 : len(head)-1]
		base = v.Env(name)
		if base == "" {
			base = windowsDefaults[name]
		}
		if base == "" {
			return "", fmt.Errorf("cannot tell %s: set %s", head, name)
		}
	default:
		return "", fmt.Errorf("bad path template %q", tmpl)
	}
	return join(base, rest), nil
}
