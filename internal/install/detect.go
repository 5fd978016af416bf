package install

import (
	"fmt"
	"strings"
)

// detection is what fillgate found of one browser.
type detection struct {
	// found is true when the browser is installed outside any sandbox.
	found bool
	// evidence is the path that showed it.
	evidence string
	// looked lists what was looked for, for the reason a browser was
	// skipped.
	looked []string
	// sandboxed lists Flatpak and Snap installs.
	sandboxed []sandboxed
}

// sandboxed is a browser installed as a Flatpak or Snap.
type sandboxed struct {
	kind     string // "flatpak" or "snap"
	id       string // the Flatpak app id or Snap name
	evidence string
}

// detect tells whether browser b is on the machine: its profile data or
// program exists, or a command of its name is on $PATH. A command under
// /snap/bin is a Snap, not a plain install.
func (s *sys) detect(b *Browser) detection {
	var d detection
	pl, ok := b.OS[s.os]
	if !ok {
		return d
	}
	for _, t := range append(append([]string{}, pl.Profile...), pl.Programs...) {
		p, err := s.expand(t)
		if err != nil {
			continue
		}
		d.looked = append(d.looked, s.tilde(p))
		if !d.found && s.exists(p) {
			d.found, d.evidence = true, p
		}
	}
	if len(pl.Commands) > 0 {
		d.looked = append(d.looked, strings.Join(pl.Commands, " or ")+" on $PATH")
	}
	for _, dir := range strings.Split(s.Env("PATH"), s.p.listSep()) {
		if dir == "" || !s.p.isAbs(dir) {
			continue
		}
		for _, c := range pl.Commands {
			p := s.p.join(dir, c)
			if !s.exists(p) {
				continue
			}
			if s.os == "linux" && strings.HasPrefix(p, "/snap/") {
				continue // counted as a Snap below
			}
			if !d.found {
				d.found, d.evidence = true, p
			}
		}
	}
	if s.os == "linux" {
		d.sandboxed = s.sandboxes(pl)
	}
	return d
}

// sandboxes finds Flatpak and Snap installs of a browser.
func (s *sys) sandboxes(pl Places) []sandboxed {
	var out []sandboxed
	check := func(kind, id string, tmpls ...string) {
		for _, t := range tmpls {
			p, err := s.expand(fmt.Sprintf(t, id))
			if err == nil && s.exists(p) {
				out = append(out, sandboxed{kind: kind, id: id, evidence: p})
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
