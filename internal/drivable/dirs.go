package drivable

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/fillgate/fillgate/internal/install"
	"github.com/fillgate/fillgate/internal/manifest"
)

// maxFile bounds what is read of a profile's small files (port files,
// profiles.ini).
const maxFile = 64 << 10

// chromiumDataDirs lists the user data directories whose DevToolsActivePort
// is looked at: the one --user-data-dir names, else the browser's default
// one (install's table, which knows where each browser keeps its "Local
// State").
func (p *Probe) chromiumDataDirs(given string) []string {
	if given != "" {
		if d := p.abs(given); d != "" {
			return []string{d}
		}
		return nil
	}
	var dirs []string
	for _, b := range p.browsers(manifest.Chromium) {
		for _, t := range b.OS[p.goos()].Profile {
			if state, ok := p.expand(t, manifest.Chromium); ok {
				dirs = appendOnce(dirs, filepath.Dir(state))
			}
		}
	}
	return dirs
}

// firefoxProfiles lists the profile directories whose port files are
// looked at: the one -profile names, else the profiles profiles.ini names
// (-P NAME's, or the defaults: each installation's and the one marked
// Default).
func (p *Probe) firefoxProfiles(f firefoxView) []string {
	if f.profile != "" {
		if d := p.abs(f.profile); d != "" {
			return []string{d}
		}
		return nil
	}
	var dirs []string
	for _, b := range p.browsers(manifest.Firefox) {
		for _, t := range b.OS[p.goos()].Profile {
			if ini, ok := p.expand(t, manifest.Firefox); ok {
				for _, d := range profilesFromINI(ini, f.named) {
					dirs = appendOnce(dirs, d)
				}
			}
		}
	}
	return dirs
}

// browsers picks the rows of install's table for this browser: the one
// whose program is the browser's executable, else the one of the browser's
// name, else every browser of the family on this OS.
func (p *Probe) browsers(f manifest.Family) []install.Browser {
	var fam []install.Browser
	for _, b := range install.Table() {
		pl, ok := b.OS[p.goos()]
		if b.Family != f || !ok {
			continue
		}
		if p.isProgram(pl.Programs) {
			return []install.Browser{b}
		}
		fam = append(fam, b)
	}
	if b := install.Lookup(p.cfg.Name); b != nil && b.Family == f {
		return []install.Browser{*b}
	}
	return fam
}

// isProgram reports whether the browser's executable is one of programs
// (table templates), or inside one of them (a macOS .app bundle).
func (p *Probe) isProgram(programs []string) bool {
	exe := p.cfg.Exe
	if exe == "" {
		return false
	}
	for _, t := range programs {
		prog, ok := p.expand(t, "")
		switch {
		case !ok:
		case p.goos() == "windows" && strings.EqualFold(exe, prog):
			return true
		case exe == prog, strings.HasSuffix(prog, ".app") && strings.HasPrefix(exe, prog+"/"):
			return true
		}
	}
	return false
}

// goos is the column of install's table that applies: BSDs and other
// Unixes read the Linux one.
func (p *Probe) goos() string {
	goos := p.cfg.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	switch goos {
	case "darwin", "windows":
		return goos
	}
	return "linux"
}

// expand turns one of install's path templates into a path: "~" is the
// home directory, "$XDG_CONFIG_HOME" that variable or ~/.config (for the
// Chromium family, CHROME_CONFIG_HOME first, as Chromium on Linux reads
// it), "%NAME%" a Windows folder variable.
func (p *Probe) expand(tmpl string, f manifest.Family) (string, bool) {
	head, rest, _ := strings.Cut(strings.ReplaceAll(tmpl, `\`, "/"), "/")
	env := p.cfg.Env
	home := env("HOME")
	if p.goos() == "windows" && env("USERPROFILE") != "" {
		home = env("USERPROFILE")
	}
	var base string
	switch {
	case head == "":
		base = string(filepath.Separator)
	case head == "~":
		base = home
	case head == "$XDG_CONFIG_HOME":
		switch {
		case f == manifest.Chromium && filepath.IsAbs(env("CHROME_CONFIG_HOME")):
			base = env("CHROME_CONFIG_HOME")
		case filepath.IsAbs(env("XDG_CONFIG_HOME")):
			base = env("XDG_CONFIG_HOME")
		case home != "":
			base = filepath.Join(home, ".config")
		}
	case len(head) > 2 && strings.HasPrefix(head, "%") && strings.HasSuffix(head, "%"):
		base = env(head[1 : len(head)-1])
	}
	if base == "" {
		return "", false
	}
	return filepath.Join(base, filepath.FromSlash(rest)), true
}

// abs makes a directory the command line names absolute: a relative one is
// taken from the browser's working directory, where the OS tells it, and
// is "" where it does not.
func (p *Probe) abs(dir string) string {
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	if cwd := processDir(p.cfg.PID); cwd != "" {
		return filepath.Join(cwd, dir)
	}
	return ""
}

// profilesFromINI reads Firefox's profiles.ini at path and lists the
// profile directories it names: the one called named, or, when named is
// "", every installation's default and the profile marked Default=1.
func profilesFromINI(path, named string) []string {
	data, err := readSmall(path)
	if err != nil {
		return nil
	}
	base := filepath.Dir(path)
	at := func(p string, relative bool) string {
		p = filepath.FromSlash(p)
		if relative || !filepath.IsAbs(p) {
			return filepath.Join(base, p)
		}
		return p
	}
	var dirs []string
	for _, s := range parseINI(data) {
		isProfile := strings.HasPrefix(s.name, "Profile")
		switch {
		case isProfile && s.kv["Path"] == "":
		case named != "":
			if isProfile && s.kv["Name"] == named {
				dirs = appendOnce(dirs, at(s.kv["Path"], s.kv["IsRelative"] == "1"))
			}
		case strings.HasPrefix(s.name, "Install") && s.kv["Default"] != "":
			dirs = appendOnce(dirs, at(s.kv["Default"], false))
		case isProfile && s.kv["Default"] == "1":
			dirs = appendOnce(dirs, at(s.kv["Path"], s.kv["IsRelative"] == "1"))
		}
	}
	return dirs
}

// iniSection is one [section] of an INI file and its keys.
type iniSection struct {
	name string
	kv   map[string]string
}

// parseINI reads the sections of an INI file; lines outside any section,
// comments and lines without "=" are skipped.
func parseINI(data []byte) []iniSection {
	var out []iniSection
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			out = append(out, iniSection{name: line[1 : len(line)-1], kv: map[string]string{}})
		case len(out) == 0, line == "", line[0] == ';', line[0] == '#':
		default:
			if k, v, ok := strings.Cut(line, "="); ok {
				out[len(out)-1].kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

// readSmall reads at most maxFile bytes of the file at path.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxFile))
}
