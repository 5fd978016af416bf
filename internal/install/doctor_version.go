package install

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fillgate/fillgate/internal/manifest"
)

// installedFrom is how this binary got onto the machine, told by where it
// lives: what to call it, and how to update it.
type installedFrom struct {
	Name    string // "Homebrew", "" when it cannot be told
	Upgrade string // the command or step that brings a newer release
	Note    string // what a person needs to know about it, or ""
}

// installedFrom tells Homebrew, Scoop and the Linux packages by their
// paths; anything else is a release archive or go install.
func (s *sys) installedFrom() installedFrom {
	bin := s.Binary
	switch low := strings.ToLower(bin); {
	case strings.Contains(bin, "/Caskroom/fillgate/") || strings.Contains(bin, "/Cellar/fillgate/"):
		return installedFrom{Name: "Homebrew", Upgrade: "brew upgrade fillgate",
			// Homebrew keeps each version in a folder of its own and
			// removes the old one on upgrade; the host manifests name
			// the binary's real path, so they need rewriting after it.
			Note: "run fillgate install again after each brew upgrade"}
	case strings.Contains(low, `\scoop\apps\fillgate\`):
		return installedFrom{Name: "Scoop", Upgrade: "scoop update fillgate"}
	case s.os == "linux" && bin == "/usr/bin/fillgate" && s.exists("/var/lib/dpkg/info/fillgate.list"):
		return installedFrom{Name: "the .deb package",
			Upgrade: "download the newer fillgate_<version>_<arch>.deb from the release page and run sudo apt install ./fillgate_<version>_<arch>.deb"}
	case s.os == "linux" && bin == "/usr/bin/fillgate":
		return installedFrom{Name: "a system package",
			Upgrade: "install the newer .deb or .rpm from the release page with your package manager"}
	}
	return installedFrom{Upgrade: "put the newer release's fillgate where this one is (or go install github.com/fillgate/fillgate@latest)"}
}

// binaryName is "fillgate <version>", with the commit and date when
// version is this binary's own and they are known.
func binaryName(version string) string {
	if version == manifest.Version {
		return "fillgate " + manifest.Build().String()
	}
	return "fillgate " + version
}

// doctorVersions checks that the extension h runs and the host it talks
// to are one version, and that both are this binary's (carried is the
// version of the extension it carries, cli its own). where names the
// browser, page its extensions page. The extension is either the unpacked
// copy fillgate install writes, which install and a reload bring in step,
// or a store's, which the store updates on its own: then the fix is to
// update whichever of the two is behind.
func (s *sys) doctorVersions(h HostStatus, name, where, page, carried, cli string) (Check, bool) {
	ext, host := h.ExtensionVersion, h.Version
	store := manifest.IsStoreOrigin(h.Caller)
	pair := ext != "" && host != "" && ext != host
	c := Check{Name: name, Level: Warn}
	switch {
	case pair:
		from := ""
		if store {
			from = " from the store"
		}
		c.Detail = fmt.Sprintf("%s runs extension %q%s with host %q; the two must be the same version", where, ext, from, host)
	case !store && carried != "" && ext != carried:
		c.Detail = fmt.Sprintf("%s runs extension %q; this binary carries %q", where, ext, carried)
	case cli != "" && host != cli:
		c.Detail = fmt.Sprintf("%s runs host %q; this binary is %q", where, host, cli)
	default:
		return Check{}, false
	}
	switch {
	case !store:
		c.Fix = "fillgate install, then reload fillgate on " + page
	case pair && !newer(ext, host):
		c.Fix = "update fillgate's extension: on " + page + " turn on Developer mode and click Update (or wait: the store updates it within a few hours)"
	case pair && (cli == "" || newer(ext, cli)):
		c.Fix = s.installedFrom().Upgrade + ", then restart the browser"
	default: // only the host is behind, and this binary has caught up
		c.Fix = "restart the browser so it starts this binary"
	}
	return c, true
}

// newer reports whether version a is later than b. Extension versions are
// one to four dot-separated numbers (the stores require it); anything
// else compares as not newer.
func newer(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		x, errA := part(pa, i)
		y, errB := part(pb, i)
		if errA != nil || errB != nil {
			return false
		}
		if x != y {
			return x > y
		}
	}
	return false
}

func part(parts []string, i int) (int, error) {
	if i >= len(parts) {
		return 0, nil
	}
	return strconv.Atoi(parts[i])
}
