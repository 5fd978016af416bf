package drivable

import (
	"bufio"
	"bytes"
	"cmp"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/manifest"
)

// maxFile bounds what is read of a profile's small files (port files,
// profiles.ini).
const maxFile = 64 << 10

// chromiumDataDirs lists the user data directories whose DevToolsActivePort
// is looked at: the one --user-data-dir names, else the browser's default
// one (the browser table, which knows where each browser keeps its "Local
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
func (p *Probe) firefoxProfiles(c browsertable.CommandLine) []string {
	if c.Profile != "" {
		if d := p.abs(c.Profile); d != "" {
			return []string{d}
		}
		return nil
	}
	var dirs []string
	for _, b := range p.browsers(manifest.Firefox) {
		for _, t := range b.OS[p.goos()].Profile {
			if ini, ok := p.expand(t, manifest.Firefox); ok {
				for _, d := range profilesFromINI(ini, c.ProfileName) {
					dirs = appendOnce(dirs, d)
				}
			}
		}
	}
	return dirs
}

// browsers picks the rows of the browser table for this browser: the one
// whose program is the browser's executable, else the one of the
// browser's name, else every browser of the family on this OS.
func (p *Probe) browsers(f manifest.Family) []browsertable.Browser {
	var fam []browsertable.Browser
	for _, b := range browsertable.Table() {
		pl, ok := b.OS[p.goos()]
		if b.Family != f || !ok {
			continue
		}
		if p.isProgram(pl.Programs) {
			return []browsertable.Browser{b}
		}
		fam = append(fam, b)
	}
	if b := browsertable.Lookup(p.cfg.Name); b != nil && b.Family == f {
		return []browsertable.Browser{*b}
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

// goos is the column of the browser table that applies.
func (p *Probe) goos() string {
	return browsertable.Column(cmp.Or(p.cfg.GOOS, runtime.GOOS))
}

// expand turns one of the browser table's path templates into a path
// (browsertable.Expand, in the browser's environment), false when it
// cannot be told. The path is read here, so it is this machine's, whatever
// OS's column the template comes from (a test reads another's).
func (p *Probe) expand(tmpl string, f manifest.Family) (string, bool) {
	path, err := browsertable.Expand(tmpl, browsertable.Vars{OS: p.goos(), Env: p.cfg.Env, Family: f, Native: true})
	return path, err == nil
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
