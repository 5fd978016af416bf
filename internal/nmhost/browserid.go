package nmhost

import (
	"os"
	"strings"

	"github.com/fillgate/fillgate/internal/drivable"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/procinfo"
)

// browserID names the browser that started this host and its profile, for
// `fillgate status` and for routing a fill to one of several browsers: the
// browser from its executable's name, the profile from its command line
// (--user-data-dir for the Chromium family, -profile or -P for Firefox),
// "default" when it names none or cannot be read.
func browserID(family manifest.Family) (name, profile string) {
	ppid := os.Getppid()
	if p, err := procinfo.Get(ppid); err == nil {
		exe := p.Exe
		if exe == "" {
			exe = p.Name
		}
		name = browserName(exe)
	}
	profile = "default"
	if args, err := procinfo.Args(ppid); err == nil {
		if pr := drivable.Profile(family, args); pr != "" {
			profile = pr
		}
	}
	return name, profile
}

// browserNames maps executable names to the names `fillgate install` and
// `--browser` use.
var browserNames = map[string]string{
	"chromium": "chromium", "chromium-browser": "chromium",
	"chrome": "chrome", "google-chrome": "chrome", "google chrome": "chrome",
	"brave": "brave", "brave-browser": "brave", "brave browser": "brave",
	"msedge": "edge", "microsoft edge": "edge",
	"vivaldi": "vivaldi", "vivaldi-bin": "vivaldi",
	"opera":   "opera",
	"firefox": "firefox", "firefox-esr": "firefox", "firefox-bin": "firefox",
	"librewolf": "librewolf", "waterfox": "waterfox",
}

// browserName maps a browser executable to its fillgate name, or returns
// the executable's own base name (without .exe) when it is not known.
func browserName(exe string) string {
	// The base name after either separator: a Windows path read on
	// another OS in tests, or a name alone.
	base := exe[strings.LastIndexAny(exe, `/\`)+1:]
	base = strings.ToLower(strings.TrimSuffix(base, ".exe"))
	if n, ok := browserNames[base]; ok {
		return n
	}
	return base
}
