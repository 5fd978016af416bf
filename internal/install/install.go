// Package install writes (Install), removes (Uninstall) and checks for
// doctor (Check) what a browser needs to start fillgate, where the browser
// table (internal/browsertable) says each browser reads it:
// the host manifests, the Windows registry keys that point at them, and
// the unpacked extension for the user to load.
//
// Install records what it wrote in install.json in the data directory.
// A manifest is fillgate's when it is exactly what Install would write now,
// or exactly what the record says Install wrote (for example before the
// binary moved); anything else is left alone unless Options.Force.
package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/fillgate/fillgate/internal/manifest"
)

// ErrConflict is returned (wrapped, with the report) when a manifest or
// registry key that is not fillgate's is in the way and Force is off.
var ErrConflict = errors.New("a host manifest or registry key that is not fillgate's is in the way; rerun with --force to replace it")

// ErrNoBrowser is returned when no browser was found and none was named.
var ErrNoBrowser = errors.New("no supported browser found on this machine; name one with --browser")

// Install writes fillgate's host manifests for the browsers o selects (on
// Windows, the manifest files and the registry keys naming them), unpacks
// the extension, and says per browser how to load it. It is idempotent. It
// returns the report with ErrConflict when something that is not
// fillgate's was left alone.
func Install(ctx context.Context, o Options) (*Report, error) {
	s, err := resolve(o)
	if err != nil {
		return nil, err
	}
	notes, err := s.checkBinary()
	if err != nil {
		return nil, err
	}
	pl, err := s.makePlan(true)
	if err != nil {
		return nil, err
	}
	r := s.newReport("install", pl)
	r.Notes = append(r.Notes, notes...)
	if len(pl.files) == 0 {
		return r, ErrNoBrowser
	}
	rec, err := s.loadRecord(pl.dataDir)
	if err != nil {
		return r, err
	}

	conflicts := 0
	conflicted := map[*fileTarget]bool{}
	for _, ft := range pl.files {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		f, err := s.installFile(ft, rec, pl.dataDir)
		if err != nil {
			return r, err
		}
		if f.Status == Conflict {
			conflicts++
			conflicted[ft] = true
		}
		r.Manifests = append(r.Manifests, f)
	}
	for _, kt := range pl.keys {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		k, err := s.installKey(kt, rec, conflicted[kt.file])
		if err != nil {
			return r, err
		}
		if k.Status == Conflict {
			conflicts++
		}
		r.Registry = append(r.Registry, k)
	}

	extDir := s.p.Join(pl.dataDir, extensionDirName)
	if r.Extension, err = s.extensionStatus(extDir, rec); err != nil {
		return r, err
	}
	if !s.DryRun {
		if err := s.unpackExtension(extDir, rec); err != nil {
			return r, err
		}
		if err := s.saveRecord(pl.dataDir, rec); err != nil {
			return r, err
		}
	}
	if conflicts > 0 {
		return r, fmt.Errorf("%d left alone: %w", conflicts, ErrConflict)
	}
	return r, nil
}

// newReport starts a report for a plan.
func (s *sys) newReport(action string, pl *plan) *Report {
	r := &Report{
		Action:       action,
		DryRun:       s.DryRun,
		Scope:        s.scope(),
		Binary:       s.Binary,
		ExtensionDir: s.p.Join(pl.dataDir, extensionDirName),
		Found:        pl.found,
		Manifests:    []File{},
		Skipped:      pl.skipped,
		Sandboxed:    pl.sandboxed,
		Notes:        pl.notes,
		tilde:        s.tilde,
	}
	if action == "install" {
		for _, b := range pl.browsers {
			steps, note := loadSteps(b, r.ExtensionDir, s.p)
			i := slices.IndexFunc(r.Steps, func(st Steps) bool { return slices.Equal(st.Steps, steps) })
			switch {
			case i < 0:
				r.Steps = append(r.Steps, Steps{Browsers: []string{b.Name}, Title: b.Title, Steps: steps, Note: note})
			case !slices.Contains(r.Steps[i].Browsers, b.Name):
				r.Steps[i].Browsers = append(r.Steps[i].Browsers, b.Name)
				r.Steps[i].Title += ", " + b.Title
				if note != "" {
					r.Steps[i].Note = temporaryNote("These browsers remove a temporary add-on when they quit")
				}
			}
		}
	}
	return r
}

// checkBinary makes sure the manifests will name a binary that runs. It
// returns notes on a binary that runs now but may not for long or for
// everyone.
func (s *sys) checkBinary() ([]string, error) {
	fi, err := s.FS.Stat(s.Binary)
	if err != nil {
		return nil, fmt.Errorf("the fillgate binary %s: %w", s.Binary, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("the fillgate binary %s is not a regular file", s.Binary)
	}
	if s.os != "windows" && fi.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("the fillgate binary %s is not executable: run chmod +x %s", s.Binary, s.Binary)
	}
	if s.System && s.os != "windows" {
		if err := s.checkSystemBinary(); err != nil {
			return nil, err
		}
	}
	var notes []string
	if strings.Contains(s.Binary, "go-build") {
		notes = append(notes, "the binary is in a temporary build folder (go run?); browsers cannot start it once it is gone: `go install` fillgate and run `fillgate install` again")
	}
	if s.System && s.os != "windows" && fi.Mode().Perm()&0o001 == 0 {
		notes = append(notes, "other users cannot run "+s.Binary+": a system-wide install needs a binary every user can execute (e.g. in /usr/local/bin, mode 0755)")
	}
	return notes, nil
}

// checkSystemBinary refuses a system-wide install of a binary that someone
// other than root could replace: every user's browser would run whatever
// that person put there. The binary and every directory above it must be
// owned by root (where the filesystem tells) and writable by no group or
// other user.
func (s *sys) checkSystemBinary() error {
	for p := s.Binary; ; {
		if fi, err := s.FS.Stat(p); err == nil {
			if fi.Mode().Perm()&0o022 != 0 {
				return fmt.Errorf("a system-wide install needs a binary only root can change, but %s is writable by others (mode %04o): "+
					"install fillgate into /usr/local/bin (owned by root, mode 0755) and run `sudo fillgate install --system` from there", p, fi.Mode().Perm())
			}
			if uid, ok := owner(fi); ok && uid != 0 {
				return fmt.Errorf("a system-wide install needs a binary only root can change, but %s belongs to uid %d: "+
					"install fillgate into /usr/local/bin (owned by root, mode 0755) and run `sudo fillgate install --system` from there", p, uid)
			}
		}
		parent := s.p.Dir(p)
		if parent == p || parent == "" || parent == "." {
			return nil
		}
		p = parent
	}
}

// want is the manifest Install writes for family f.
func (s *sys) want(f manifest.Family) ([]byte, error) {
	h, err := manifest.New(f, s.Binary, s.Origins)
	if err != nil {
		return nil, err
	}
	return h.Marshal()
}

// ours reports whether have, found at path, is fillgate's: what Install
// would write now, or what the record says Install wrote there.
func (s *sys) ours(rec *record, path string, f manifest.Family, have []byte) bool {
	if want, err := s.want(f); err == nil && bytes.Equal(have, want) {
		return true
	}
	rf := rec.file(path)
	return rf != nil && rf.SHA256 == digest(have)
}

// foreign describes a manifest that is not fillgate's.
func foreign(have []byte) string {
	h, err := manifest.Parse(have)
	if err != nil {
		return "not written by this fillgate install, and " + err.Error()
	}
	return fmt.Sprintf("not written by this fillgate install (or changed since): it runs %q", h.Path)
}

func (s *sys) installFile(ft *fileTarget, rec *record, dataDir string) (File, error) {
	f := File{Path: ft.path, Browsers: ft.browsers}
	want, err := s.want(ft.family)
	if err != nil {
		return f, err
	}
	have, err := s.FS.ReadFile(ft.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.Status = Created
	case err != nil:
		return f, fmt.Errorf("read %s: %w", ft.path, err)
	case bytes.Equal(have, want):
		f.Status = Unchanged
	case s.ours(rec, ft.path, ft.family, have):
		f.Status = Updated
	case s.Force:
		f.Status, f.Detail = Replaced, foreign(have)
	default:
		f.Status, f.Detail = Conflict, foreign(have)+"; --force replaces it"
		return f, nil
	}
	if s.DryRun {
		return f, nil
	}
	if f.Status != Unchanged {
		dir := s.p.Dir(ft.path)
		rec.Dirs = union(rec.Dirs, s.missingDirs(dir, dataDir))
		if err := s.FS.MkdirAll(dir, 0o755); err != nil {
			return f, fmt.Errorf("create %s: %w%s", dir, err, s.sudoHint())
		}
		if err := s.FS.WriteFile(ft.path, want, 0o644); err != nil {
			return f, fmt.Errorf("%w%s", err, s.sudoHint())
		}
	}
	rec.putFile(ft.path, ft.family, digest(want), ft.browsers)
	return f, nil
}

func (s *sys) installKey(kt *keyTarget, rec *record, fileConflict bool) (Key, error) {
	k := Key{Key: string(kt.root) + `\` + kt.key, Value: kt.file.path, Browsers: kt.browsers}
	if fileConflict {
		k.Status, k.Detail = Conflict, "its manifest file was left alone"
		return k, nil
	}
	cur, ok, err := s.Registry.Default(kt.root, kt.key)
	if err != nil {
		return k, err
	}
	rk := rec.key(kt.root, kt.key)
	switch {
	case !ok:
		k.Status = Created
	case cur == kt.file.path:
		k.Status = Unchanged
	case rk != nil && rk.Value == cur:
		k.Status = Updated
	case s.Force:
		k.Status, k.Detail = Replaced, "pointed at "+cur
	default:
		k.Status, k.Detail = Conflict, "points at "+cur+", not a manifest fillgate wrote; --force replaces it"
		return k, nil
	}
	if s.DryRun {
		return k, nil
	}
	if k.Status != Unchanged {
		parents, err := s.missingKeys(kt.root, kt.key)
		if err != nil {
			return k, err
		}
		// Recorded before the write: a failed write may have made some.
		rec.putKeyDirs(kt.root, parents)
		if err := s.Registry.SetDefault(kt.root, kt.key, kt.file.path); err != nil {
			return k, fmt.Errorf("%w%s", err, s.sudoHint())
		}
	}
	rec.putKey(kt.root, kt.key, kt.file.path, kt.browsers)
	return k, nil
}

// missingKeys lists the parents of key that do not exist, deepest first,
// below the root's first level (Software), which always exists.
func (s *sys) missingKeys(root Root, key string) ([]string, error) {
	var out []string
	for k := key; ; {
		i := strings.LastIndexByte(k, '\\')
		if i < 0 {
			return out, nil
		}
		k = k[:i]
		if !strings.ContainsRune(k, '\\') {
			return out, nil
		}
		_, ok, err := s.Registry.Entries(root, k)
		if err != nil {
			return nil, err
		}
		if ok {
			return out, nil
		}
		out = append(out, k)
	}
}

// missingDirs lists dir and those of its parents that do not exist, for
// uninstall to remove once empty. The data directory and its parents are
// not listed: they hold the record and the extension.
func (s *sys) missingDirs(dir, dataDir string) []string {
	var out []string
	for d := dir; d != "." && d != "" && !s.exists(d); d = s.p.Dir(d) {
		if d == dataDir || strings.HasPrefix(dataDir, d+s.p.Sep()) {
			break
		}
		out = append(out, d)
		if s.p.Dir(d) == d {
			break
		}
	}
	return out
}

// sudoHint is added to errors writing system-wide places.
func (s *sys) sudoHint() string {
	if !s.System {
		return ""
	}
	if s.os == "windows" {
		return " (a --system install needs an Administrator prompt)"
	}
	return " (a --system install needs root: run it with sudo)"
}

// extensionStatus says what unpacking the extension into dir will do.
func (s *sys) extensionStatus(dir string, rec *record) (Status, error) {
	files, err := s.extensionFiles()
	if err != nil {
		return "", err
	}
	same := rec.Extension != nil && rec.Extension.Dir == dir && slices.Equal(rec.Extension.Files, files)
	for _, f := range files {
		want, err := fs.ReadFile(s.ext, f)
		if err != nil {
			return "", fmt.Errorf("read embedded %s: %w", f, err)
		}
		have, err := s.FS.ReadFile(s.p.Join(dir, f))
		if err != nil || !bytes.Equal(have, want) {
			same = false
			break
		}
	}
	switch {
	case same:
		return Unchanged, nil
	case s.exists(s.p.Join(dir, "manifest.json")):
		return Updated, nil
	}
	return Created, nil
}
