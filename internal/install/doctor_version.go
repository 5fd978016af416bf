package install

import (
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
