package browsertable

import (
	"strings"

	"github.com/fillgate/fillgate/internal/manifest"
)

// moreExecutables are executables of the table's browsers that are neither
// a program nor a command of the table: the binary behind a launcher
// script, or an older name.
var moreExecutables = map[string]string{
	"vivaldi-bin":      "vivaldi",
	"firefox-bin":      "firefox",
	"microsoft-edge":   "edge",
	"chromium-browser": "chromium",
}

// forks are the executables of browsers outside the table that are of a
// family: they read its manifests' folders or a fork's own, and a host
// they start is judged as the family's.
var forks = map[manifest.Family][]string{
	manifest.Chromium: {"thorium", "yandex", "helium"},
	manifest.Firefox:  {"floorp", "zen", "icecat", "iceweasel"},
}

// executableName is the name a process's executable goes by: the base
// name after either separator (a Windows path read on another OS in tests
// is split too), in lower case, without ".exe" or ".app".
func executableName(exe string) string {
	base := exe[strings.LastIndexAny(exe, `/\`)+1:]
	base = strings.ToLower(base)
	base = strings.TrimSuffix(base, ".exe")
	return strings.TrimSuffix(base, ".app")
}

// executables maps the name of every executable the table knows (its
// programs, a macOS bundle's name being its executable's, and its commands)
// to the first browser of the table that has it: "chrome" is Google
// Chrome's, though its Beta's and Chromium's on Windows are called so too.
func executables() map[string]*Browser {
	out := map[string]*Browser{}
	add := func(name string, b *Browser) {
		if _, ok := out[name]; !ok && name != "" {
			out[name] = b
		}
	}
	for i := range browsers {
		b := &browsers[i]
		for _, col := range []string{"linux", "darwin", "windows"} {
			pl := b.OS[col]
			for _, p := range pl.Programs {
				add(executableName(p), b)
			}
			for _, c := range pl.Commands {
				add(executableName(c), b)
			}
		}
	}
	for exe, name := range moreExecutables {
		add(exe, Lookup(name))
	}
	return out
}

// ByExecutable returns the browser whose executable (a path, or a name
// alone) exe is, or nil when the table has none of that name.
func ByExecutable(exe string) *Browser {
	if b := executables()[executableName(exe)]; b != nil {
		c := *b
		return &c
	}
	return nil
}

// Name is the name fillgate gives the browser whose executable is exe: its
// --browser name when the table knows it, else the executable's own name.
func Name(exe string) string {
	if b := ByExecutable(exe); b != nil {
		return b.Name
	}
	return executableName(exe)
}

// OfFamily reports whether exe is the executable of a browser of family
// f: one of the table's, or of a fork's, or one whose name begins with
// theirs ("google-chrome-stable", "brave-browser-nightly").
func OfFamily(f manifest.Family, exe string) bool {
	name := executableName(exe)
	if name == "" {
		return false
	}
	for known, b := range executables() {
		if b.Family == f && strings.HasPrefix(name, known) {
			return true
		}
	}
	for _, known := range forks[f] {
		if strings.HasPrefix(name, known) {
			return true
		}
	}
	return false
}
