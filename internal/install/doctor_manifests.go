package install

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/doctor"
	"github.com/fillgate/fillgate/internal/manifest"
)

// doctorManifests checks every browser's manifests and returns a browser
// that has a good one (for the hint on loading the extension), or nil.
func (s *sys) doctorManifests(d *checks) *browsertable.Browser {
	var good *browsertable.Browser
	present := 0
	// Per-user (or the --user-data-dir profile) and system-wide; with
	// --system, system-wide only.
	scopes := []*sys{s}
	if s.UserDataDir == "" && !s.System {
		sys := *s
		sys.System = true
		scopes = append(scopes, &sys)
	}
	for _, sc := range scopes {
		pl, err := sc.makePlan(false)
		if err != nil {
			d.add(doctor.Check{Name: "manifests", Level: doctor.Fail, Detail: err.Error()})
			return nil
		}
		rec, err := sc.loadRecord(pl.dataDir)
		if err != nil {
			d.add(doctor.Check{Name: "record", Level: doctor.Warn, Detail: err.Error(), Fix: "rm " + sc.p.Join(pl.dataDir, recordName)})
			rec = &record{}
		}
		found := map[string]string{}
		for _, f := range pl.found {
			found[f.Browser] = f.Evidence
		}
		if sc.os == "windows" {
			for _, kt := range pl.keys {
				n, ok := sc.doctorKey(d, kt, rec, found)
				present += n
				if len(ok) > 0 && good == nil {
					good = browsertable.Lookup(ok[0])
				}
			}
			continue
		}
		planned := map[string]bool{}
		for _, ft := range pl.files {
			planned[ft.path] = true
			n, ok := sc.doctorFile(d, ft, rec, found)
			present += n
			if len(ok) > 0 && good == nil {
				good = browsertable.Lookup(ok[0])
			}
		}
		// Manifests install wrote elsewhere, as the record says: those of
		// `install --user-data-dir DIR` profiles (a Chromium-family
		// manifest in a NativeMessagingHosts folder no browser reads by
		// default).
		if !sc.System && sc.UserDataDir == "" && len(rec.Files) > 0 {
			defaults := sc.defaultManifests()
			for _, rf := range rec.Files {
				if planned[rf.Path] || defaults[rf.Path] || rf.Family != manifest.Chromium ||
					sc.p.Dir(rf.Path) == rf.Path || !strings.HasSuffix(sc.p.Dir(rf.Path), sc.p.Sep()+"NativeMessagingHosts") {
					continue
				}
				psc := *sc
				psc.UserDataDir = sc.p.Dir(sc.p.Dir(rf.Path))
				ft := &fileTarget{path: rf.Path, family: rf.Family, scope: ScopeProfile, browsers: rf.Browsers}
				n, ok := psc.doctorFile(d, ft, rec, found)
				if n == 0 {
					d.add(doctor.Check{Name: strings.Join(rf.Browsers, ","), Level: doctor.Warn,
						Detail: fmt.Sprintf("the host manifest fillgate installed at %s is gone", sc.tilde(rf.Path)),
						Fix:    psc.installCmd(rf.Browsers, false)})
				}
				present += n
				if len(ok) > 0 && good == nil {
					good = browsertable.Lookup(ok[0])
				}
			}
		}
		for _, sb := range pl.sandboxed {
			if sc.System {
				continue // reported once, with the user scope
			}
			c := doctor.Check{Name: sb.Browser, Level: doctor.Warn, Detail: sb.Detail, Fix: sb.Fix}
			if sb.Works && sb.Kind == "snap" {
				c.Level, c.Fix = doctor.OK, ""
			}
			d.add(c)
		}
	}
	if present == 0 {
		d.add(doctor.Check{Name: "manifests", Level: doctor.Fail, Detail: "no browser has fillgate's host manifest, so no browser can start fillgate", Fix: s.installCmd(s.Browsers, false)})
	}
	return good
}

// defaultManifests is the set of places where some browser of the table
// reads manifests by default, in s's scope.
func (s *sys) defaultManifests() map[string]bool {
	all := *s
	all.Browsers = nil
	out := map[string]bool{}
	if pl, err := all.makePlan(false); err == nil {
		for _, ft := range pl.files {
			out[ft.path] = true
		}
	}
	return out
}

// installCmd is the command that (re)installs for browsers in s's scope.
func (s *sys) installCmd(browsers []string, force bool) string {
	cmd := "fillgate install"
	if s.System && s.os != "windows" {
		cmd = "sudo " + cmd
	}
	if s.UserDataDir == "" {
		for _, b := range browsers {
			cmd += " --browser " + b
		}
	}
	if s.System {
		cmd += " --system"
		if s.os == "windows" {
			cmd += " (as Administrator)"
		}
	}
	if s.UserDataDir != "" {
		cmd += " --user-data-dir " + quote(s.UserDataDir)
	}
	if force {
		cmd += " --force"
	}
	return cmd
}

func quote(p string) string {
	if strings.ContainsAny(p, " '\"$\\") {
		return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
	}
	return p
}

// titles names browsers for people.
func titles(names []string) string {
	var ts []string
	for _, n := range names {
		if b := browsertable.Lookup(n); b != nil {
			ts = append(ts, b.Title)
		}
	}
	return strings.Join(ts, ", ")
}

// detected returns the evidence that one of browsers is installed.
func detected(browsers []string, found map[string]string) string {
	for _, b := range browsers {
		if e, ok := found[b]; ok {
			return e
		}
	}
	return ""
}

// relevant narrows the browsers reading a shared place to those it was
// installed for (by the record), else those found on the machine, else
// all of them.
func relevant(browsers, recorded []string, found map[string]string) []string {
	var out []string
	for _, b := range browsers {
		if slices.Contains(recorded, b) {
			out = append(out, b)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, b := range browsers {
		if _, ok := found[b]; ok {
			out = append(out, b)
		}
	}
	if len(out) > 0 {
		return out
	}
	return browsers
}

// doctorFile checks one manifest file. It returns 1 if the file exists,
// and, when it is entirely right, the browsers it serves.
func (s *sys) doctorFile(d *checks, ft *fileTarget, rec *record, found map[string]string) (int, []string) {
	var recorded []string
	if rf := rec.file(ft.path); rf != nil {
		recorded = rf.Browsers
	}
	browsers := relevant(ft.browsers, recorded, found)
	name := strings.Join(browsers, ",")
	have, err := s.FS.ReadFile(ft.path)
	if errors.Is(err, fs.ErrNotExist) {
		if ev := detected(ft.browsers, found); ev != "" && !s.System {
			d.add(doctor.Check{Name: name, Level: doctor.Warn,
				Detail: fmt.Sprintf("%s is installed (%s) but has no host manifest at %s, so it cannot start fillgate", titles(browsers), s.tilde(ev), s.tilde(ft.path)),
				Fix:    s.installCmd(browsers, false)})
		}
		return 0, nil
	}
	if err != nil {
		d.add(doctor.Check{Name: name, Level: doctor.Fail, Detail: fmt.Sprintf("cannot read %s: %v", ft.path, err)})
		return 1, nil
	}
	if !s.doctorManifest(d, name, ft.path, browsers, ft.family, have, s.ours(rec, ft.path, ft.family, have)) {
		return 1, nil
	}
	return 1, browsers
}

// doctorKey checks one Windows registry key and the manifest it names,
// and returns as doctorFile does.
func (s *sys) doctorKey(d *checks, kt *keyTarget, rec *record, found map[string]string) (int, []string) {
	var recorded []string
	if rk := rec.key(kt.root, kt.key); rk != nil {
		recorded = rk.Browsers
	}
	browsers := relevant(kt.browsers, recorded, found)
	name := strings.Join(browsers, ",")
	key := string(kt.root) + `\` + kt.key
	cur, ok, err := s.Registry.Default(kt.root, kt.key)
	switch {
	case err != nil:
		d.add(doctor.Check{Name: name, Level: doctor.Fail, Detail: fmt.Sprintf("cannot read %s: %v", key, err)})
		return 0, nil
	case !ok:
		if ev := detected(kt.browsers, found); ev != "" && !s.System {
			d.add(doctor.Check{Name: name, Level: doctor.Warn,
				Detail: fmt.Sprintf("%s is installed (%s) but the registry has no %s, so it cannot find fillgate", titles(browsers), ev, key),
				Fix:    s.installCmd(browsers, false)})
		}
		return 0, nil
	}
	rk := rec.key(kt.root, kt.key)
	keyOurs := cur == kt.file.path || (rk != nil && rk.Value == cur)
	have, err := s.FS.ReadFile(cur)
	if err != nil {
		d.add(doctor.Check{Name: name, Level: doctor.Fail, Detail: fmt.Sprintf("%s points at %s, which cannot be read: %v", key, cur, err),
			Fix: s.installCmd(browsers, !keyOurs)})
		return 1, nil
	}
	ours := keyOurs && s.ours(rec, cur, kt.file.family, have)
	if !s.doctorManifest(d, name, cur, browsers, kt.file.family, have, ours) {
		return 1, nil
	}
	return 1, browsers
}

// doctorManifest checks a manifest's content and the binary it runs.
func (s *sys) doctorManifest(d *checks, name, path string, browsers []string, fam manifest.Family, have []byte, ours bool) bool {
	fix := s.installCmd(browsers, !ours)
	h, err := manifest.Parse(have)
	if err != nil {
		d.add(doctor.Check{Name: name, Level: doctor.Fail, Detail: s.tilde(path) + " is " + err.Error(), Fix: fix})
		return false
	}
	okay := true
	for _, p := range h.Check(fam, s.Origins, s.p.IsAbs) {
		d.add(doctor.Check{Name: name, Level: doctor.Fail, Detail: fmt.Sprintf("%s: %s %s", s.tilde(path), p.Field, p.Detail), Fix: fix})
		okay = false
	}
	if h.Path == "" || !s.p.IsAbs(h.Path) {
		return false
	}
	real, err := s.FS.EvalSymlinks(h.Path)
	if err != nil {
		real = h.Path
	}
	fi, err := s.FS.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add(doctor.Check{Name: name, Level: doctor.Fail,
			Detail: fmt.Sprintf("%s points at %s, which does not exist: the binary was moved or deleted", s.tilde(path), h.Path),
			Fix:    fix})
		return false
	case err != nil:
		d.add(doctor.Check{Name: name, Level: doctor.Fail, Detail: fmt.Sprintf("%s points at %s: %v", s.tilde(path), h.Path, err), Fix: fix})
		return false
	case !fi.Mode().IsRegular():
		d.add(doctor.Check{Name: name, Level: doctor.Fail, Detail: fmt.Sprintf("%s points at %s, which is not a file", s.tilde(path), h.Path), Fix: fix})
		return false
	case s.os != "windows" && fi.Mode().Perm()&0o111 == 0:
		d.add(doctor.Check{Name: name, Level: doctor.Fail, Detail: fmt.Sprintf("%s runs %s, which is not executable", s.tilde(path), h.Path), Fix: "chmod +x " + quote(h.Path)})
		return false
	case real != s.Binary:
		d.add(doctor.Check{Name: name, Level: doctor.Warn,
			Detail: fmt.Sprintf("%s runs %s, not this binary (%s)", s.tilde(path), h.Path, s.Binary),
			Fix:    fix})
		return false
	}
	if okay {
		d.add(doctor.Check{Name: name, Level: doctor.OK, Detail: fmt.Sprintf("%s starts %s for fillgate's extension", s.tilde(path), s.tilde(h.Path))})
	}
	return okay
}
