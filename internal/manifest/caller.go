package manifest

import (
	"fmt"
	"slices"
	"strings"
)

// Caller is who started fillgate as a native-messaging host.
type Caller struct {
	Family Family // Chromium or Firefox
	// ID is the extension origin (Chromium family) or add-on id (Firefox)
	// the browser passed.
	ID string
}

// LooksLikeHost reports whether args (without the program name) are the
// arguments a browser passes to a native-messaging host: the caller origin
// `chrome-extension://<id>/` (Chromium family, which on Windows adds
// `--parent-window=N`), or a host-manifest path and an add-on id (Firefox).
// Such arguments are never a CLI command.
func LooksLikeHost(args []string) bool {
	if len(args) == 0 {
		return false
	}
	if strings.HasPrefix(args[0], "chrome-extension://") {
		return true
	}
	return len(args) == 2 && strings.HasSuffix(strings.ToLower(args[0]), ".json") &&
		(strings.Contains(args[1], "@") || strings.HasPrefix(args[1], "{"))
}

// ParseCaller checks that the browser started the host for fillgate's own
// extension, one of origins in a Chromium-family browser. Any other caller
// is an error that says who called.
func ParseCaller(args []string, origins Origins) (Caller, error) {
	if !LooksLikeHost(args) {
		return Caller{}, fmt.Errorf("not started by a browser (arguments do not name an extension)")
	}
	if strings.HasPrefix(args[0], "chrome-extension://") {
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "--parent-window=") {
				return Caller{}, fmt.Errorf("unexpected argument %q after the caller origin", a)
			}
		}
		if !slices.Contains(origins, args[0]) {
			return Caller{}, fmt.Errorf("called by %s, which is not fillgate's extension (%s); "+
				"load fillgate's extension, or re-run fillgate install", args[0], strings.Join(origins, " or "))
		}
		return Caller{Family: Chromium, ID: args[0]}, nil
	}
	if args[1] != FirefoxID {
		return Caller{}, fmt.Errorf("called by add-on %s, which is not fillgate's add-on (%s)", args[1], FirefoxID)
	}
	return Caller{Family: Firefox, ID: args[1]}, nil
}
