package browsertable

import (
	"slices"
	"strings"
	"sync"

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
// It is made once, from the table, which never changes.
var executables = sync.OnceValue(func() map[string]*Browser {
	out := map[string]*Browser{}
	add := func(name string, b *Browser) {
		if _, ok := out[name]; !ok && name != "" && b != nil {
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
})

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

// channelWords are the words a browser's executable may carry after its
// name: a channel, an edition, a wrapper's suffix ("google-chrome-stable",
// "brave-browser-nightly", "Google Chrome Beta", "vivaldi-bin").
var channelWords = map[string]bool{
	"stable": true, "beta": true, "dev": true, "unstable": true, "nightly": true, "canary": true,
	"esr": true, "developer": true, "edition": true, "bin": true, "browser": true, "for": true, "testing": true,
}

// OfFamily reports whether exe is the executable of a browser of family
// f: one of the table's or of a fork's, by its name alone or followed by
// channel words ("google-chrome-stable", "Microsoft Edge Dev"). Anything
// else is not, a helper process of the browser ("chrome_crashpad_handler",
// "Google Chrome Helper") and a program whose name merely begins like a
// browser's ("arcade") among them.
func OfFamily(f manifest.Family, exe string) bool {
	name := executableName(exe)
	if name == "" {
		return false
	}
	for k, b := range executables() {
		if b.Family == f && named(name, k) {
			return true
		}
	}
	return slices.ContainsFunc(forks[f], func(k string) bool { return named(name, k) })
}

// named reports whether the executable name is the known name k, alone or
// followed by channel words, each after a "-", "_" or " ".
func named(name, k string) bool {
	rest, ok := strings.CutPrefix(name, k)
	if !ok || rest == "" {
		return ok
	}
	if !strings.ContainsRune("-_ ", rune(rest[0])) {
		return false
	}
	words := strings.FieldsFunc(rest, func(r rune) bool { return strings.ContainsRune("-_ ", r) })
	return len(words) > 0 && !slices.ContainsFunc(words, func(w string) bool { return !channelWords[w] })
}
