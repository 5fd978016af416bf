package nmhost

import (
	"os"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/procinfo"
)

// browserID names the browser that started this host and its profile, for
// `fillgate status` and for routing a fill to one of several browsers: the
// browser from its executable (browsertable.Name), the profile from its
// command line (--user-data-dir for the Chromium family, -profile or -P for
// Firefox), "default" when it names none or cannot be read.
func browserID(family manifest.Family) (name, profile string) {
	ppid := os.Getppid()
	if p, err := procinfo.Get(ppid); err == nil {
		exe := p.Exe
		if exe == "" {
			exe = p.Name
		}
		name = browsertable.Name(exe)
	}
	profile = "default"
	if args, err := procinfo.Args(ppid); err == nil {
		if pr := browsertable.ReadCommandLine(family, args).ProfileID(); pr != "" {
			profile = pr
		}
	}
	return name, profile
}
