package browsertable

import (
	"fmt"
	"strings"
)

// Detection is what was found of one browser on one machine.
type Detection struct {
	// Found is true when the browser is installed outside any sandbox.
	Found bool
	// Evidence is the path that showed it.
	Evidence string
	// Looked lists the paths looked at, and the commands looked for on
	// $PATH, for the reason a browser was skipped.
	Looked []string
	// Sandboxed lists its Flatpak and Snap installs (Linux).
	Sandboxed []Sandboxed
}

// Sandboxed is a browser installed as a Flatpak or Snap.
type Sandboxed struct {
	Kind     string // "flatpak" or "snap"
	ID       string // the Flatpak app id or Snap name
	Evidence string // the path that showed it
}

// Detect tells whether browser b is on the machine v describes: its
// profile data or program exists, or a command of its name is on $PATH
// (one under /snap/bin is a Snap, not a plain install). exists says
// whether a path exists there.
func Detect(b *Browser, v Vars, exists func(string) bool) Detection {
	var d Detection
	pl, ok := b.OS[v.OS]
	if !ok {
		return d
	}
	v.Family = b.Family
	p := Path(v.OS)
	for _, t := range append(append([]string{}, pl.Profile...), pl.Programs...) {
		path, err := Expand(t, v)
		if err != nil {
			continue
		}
		d.Looked = append(d.Looked, path)
		if !d.Found && exists(path) {
			d.Found, d.Evidence = true, path
		}
	}
	if len(pl.Commands) > 0 {
		d.Looked = append(d.Looked, strings.Join(pl.Commands, " or ")+" on $PATH")
	}
	for _, dir := range strings.Split(v.Env("PATH"), p.ListSep()) {
		if dir == "" || !p.IsAbs(dir) {
			continue
		}
		for _, c := range pl.Commands {
			path := p.Join(dir, c)
			if !exists(path) {
				continue
			}
			if v.OS == "linux" && strings.HasPrefix(path, "/snap/") {
				continue // counted as a Snap below
			}
			if !d.Found {
				d.Found, d.Evidence = true, path
			}
		}
	}
	if v.OS == "linux" {
		d.Sandboxed = sandboxes(pl, v, exists)
	}
	return d
}

// sandboxes finds Flatpak and Snap installs of a browser.
func sandboxes(pl Places, v Vars, exists func(string) bool) []Sandboxed {
	var out []Sandboxed
	v.Family = ""
	check := func(kind, id string, tmpls ...string) {
		for _, t := range tmpls {
			p, err := Expand(fmt.Sprintf(t, id), v)
			if err == nil && exists(p) {
				out = append(out, Sandboxed{Kind: kind, ID: id, Evidence: p})
				return
			}
		}
	}
	if pl.Flatpak != "" {
		check("flatpak", pl.Flatpak, "~/.var/app/%s", "/var/lib/flatpak/app/%s", "~/.local/share/flatpak/app/%s")
	}
	if pl.Snap != "" {
		check("snap", pl.Snap, "/snap/bin/%s", "/snap/%s/current", "~/snap/%s")
	}
	return out
}
