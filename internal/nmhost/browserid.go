package nmhost

import (
	"os"
	"strings"

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
		if pr := profileArg(family, args); pr != "" {
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

// profileArg finds the profile in a browser's command line, or "".
//
// Chromium on Linux rewrites its process title: /proc/<pid>/cmdline is
// then one string of the arguments joined by spaces, so a flag is also
// looked for after a space, its value running to the next " --".
func profileArg(family manifest.Family, args []string) string {
	if len(args) == 1 && family != manifest.Firefox {
		if _, v, ok := strings.Cut(args[0], " --user-data-dir="); ok {
			v, _, _ = strings.Cut(v, " --")
			return v
		}
	}
	if len(args) > 0 {
		args = args[1:]
	}
	for i, a := range args {
		if family == manifest.Firefox {
			if (a == "-profile" || a == "--profile" || a == "-P") && i+1 < len(args) {
				return args[i+1]
			}
			continue
		}
		if v, ok := strings.CutPrefix(a, "--user-data-dir="); ok {
			return v
		}
	}
	return ""
}
