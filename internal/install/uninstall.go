package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// Uninstall removes what Install wrote for the browsers o selects (all of
// them when none is named): host manifests and registry keys that are
// fillgate's, and, once no manifest of fillgate's is left, the unpacked
// extension. Anything else is left alone and reported. A manifest shared by
// several browsers (Opera reads Google Chrome's) stays while a browser
// fillgate installed it for still uses it.
func Uninstall(ctx context.Context, o Options) (*Report, error) {
	s, err := resolve(o)
	if err != nil {
		return nil, err
	}
	pl, err := s.makePlan(false)
	if err != nil {
		return nil, err
	}
	pl.found, pl.skipped, pl.sandboxed = nil, nil, nil
	// In a dry run the record is changed as if for real, but never saved.
	rec, err := s.loadRecord(pl.dataDir)
	if err != nil {
		return nil, err
	}
	filtered := len(s.Browsers) > 0 || s.UserDataDir != ""
	if !filtered {
		// Everything the record lists, wherever it was written.
		for _, rf := range rec.Files {
			i := slices.IndexFunc(pl.files, func(t *fileTarget) bool { return t.path == rf.Path })
			if i < 0 {
				pl.files = append(pl.files, &fileTarget{path: rf.Path, family: rf.Family, scope: s.scope(), browsers: rf.Browsers})
			} else {
				pl.files[i].browsers = union(pl.files[i].browsers, rf.Browsers)
			}
		}
		for _, rk := range rec.Keys {
			if !slices.ContainsFunc(pl.keys, func(k *keyTarget) bool { return k.root == rk.Root && k.key == rk.Key }) {
				pl.keys = append(pl.keys, &keyTarget{root: rk.Root, key: rk.Key, file: &fileTarget{path: rk.Value}, browsers: rk.Browsers})
			}
		}
	}
	r := s.newReport("uninstall", pl)

	for _, kt := range pl.keys {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		k, err := s.uninstallKey(kt, rec, filtered)
		if err != nil {
			return r, err
		}
		if k != nil {
			r.Registry = append(r.Registry, *k)
		}
	}
	for _, ft := range pl.files {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		f, err := s.uninstallFile(ft, rec, filtered)
		if err != nil {
			return r, err
		}
		if f != nil {
			r.Manifests = append(r.Manifests, *f)
		}
	}

	if err := s.removeEmptyKeys(rec); err != nil {
		return r, err
	}
	if err := s.removeEmptyDirs(rec); err != nil {
		return r, err
	}

	extDir := s.p.Join(pl.dataDir, extensionDirName)
	if rec.Extension != nil {
		extDir = rec.Extension.Dir
		r.ExtensionDir = extDir
	}
	switch {
	case len(rec.Files) > 0 || len(rec.Keys) > 0:
		if rec.Extension != nil {
			r.Extension = Kept
			r.Notes = append(r.Notes, "the unpacked extension stays while fillgate manifests remain for other browsers")
		}
	default:
		files, err := s.ourExtensionFiles(extDir, rec)
		if err != nil {
			return r, err
		}
		if len(files) > 0 {
			r.Extension = Removed
			if !s.DryRun {
				if err := s.removeExtensionFiles(extDir, files); err != nil {
					return r, err
				}
			}
			r.Notes = append(r.Notes, "also remove fillgate from each browser you loaded it in, on its extensions page")
		}
		rec.Extension = nil
	}
	if !s.DryRun {
		if err := s.saveRecord(pl.dataDir, rec); err != nil {
			return r, err
		}
	}
	return r, nil
}

// removeEmptyDirs removes the folders install created that no longer
// hold anything, deepest first, and forgets those that are gone.
func (s *sys) removeEmptyDirs(rec *record) error {
	dirs := slices.Clone(rec.Dirs)
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	for _, d := range dirs {
		entries, err := s.FS.ReadDir(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil || len(entries) > 0:
			continue
		case !s.DryRun:
			if err := s.FS.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %s: %w%s", d, err, s.sudoHint())
			}
		}
		rec.Dirs = slices.DeleteFunc(rec.Dirs, func(x string) bool { return x == d })
	}
	return nil
}

// removeEmptyKeys deletes the registry keys install created above its own
// that no longer hold a subkey or a value, deepest first, and forgets
// those that are gone. A key that holds anything (a browser installed
// since, another program's host) stays, and stays recorded.
func (s *sys) removeEmptyKeys(rec *record) error {
	keys := slices.Clone(rec.KeyDirs)
	slices.SortFunc(keys, func(a, b recordKeyDir) int { return len(b.Key) - len(a.Key) })
	for _, kd := range keys {
		n, ok, err := s.Registry.Entries(kd.Root, kd.Key)
		switch {
		case err != nil:
			return err
		case ok && n > 0:
			continue
		case ok && !s.DryRun:
			if err := s.Registry.DeleteKey(kd.Root, kd.Key); err != nil {
				return fmt.Errorf("%w%s", err, s.sudoHint())
			}
		}
		rec.KeyDirs = slices.DeleteFunc(rec.KeyDirs, func(x recordKeyDir) bool { return x == kd })
	}
	return nil
}

// ourExtensionFiles lists the unpacked extension's files that install
// wrote: those in the record or, without one, those identical to the
// embedded extension's.
func (s *sys) ourExtensionFiles(dir string, rec *record) ([]string, error) {
	if rec.Extension != nil {
		return rec.Extension.Files, nil
	}
	files, err := s.extensionFiles()
	if err != nil {
		return nil, err
	}
	var ours []string
	for _, f := range files {
		want, err := fs.ReadFile(s.ext, f)
		if err != nil {
			return nil, fmt.Errorf("read embedded %s: %w", f, err)
		}
		if have, err := s.FS.ReadFile(s.p.Join(dir, f)); err == nil && bytes.Equal(have, want) {
			ours = append(ours, f)
		}
	}
	return ours, nil
}

// remaining is the browsers besides mine that the record says use a
// shared place.
func remaining(recorded, mine []string) []string {
	var rest []string
	for _, b := range recorded {
		if !slices.Contains(mine, b) {
			rest = append(rest, b)
		}
	}
	return rest
}

func (s *sys) uninstallFile(ft *fileTarget, rec *record, filtered bool) (*File, error) {
	have, err := s.FS.ReadFile(ft.path)
	if errors.Is(err, fs.ErrNotExist) {
		rec.dropFile(ft.path)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ft.path, err)
	}
	f := &File{Path: ft.path, Browsers: ft.browsers}
	if rf := rec.file(ft.path); rf != nil && !filtered {
		f.Browsers = rf.Browsers
	}
	if !s.ours(rec, ft.path, ft.family, have) {
		f.Status, f.Detail = Kept, foreign(have)+"; left alone"
		return f, nil
	}
	if rf := rec.file(ft.path); filtered && rf != nil {
		if rest := remaining(rf.Browsers, ft.browsers); len(rest) > 0 {
			f.Status, f.Detail = Kept, "still used by "+strings.Join(rest, ", ")
			rf.Browsers = rest
			return f, nil
		}
	}
	f.Status = Removed
	rec.dropFile(ft.path)
	if !s.DryRun {
		if err := s.FS.Remove(ft.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return f, fmt.Errorf("remove %s: %w%s", ft.path, err, s.sudoHint())
		}
	}
	return f, nil
}

func (s *sys) uninstallKey(kt *keyTarget, rec *record, filtered bool) (*Key, error) {
	cur, ok, err := s.Registry.Default(kt.root, kt.key)
	if err != nil {
		return nil, err
	}
	if !ok {
		rec.dropKey(kt.root, kt.key)
		return nil, nil
	}
	k := &Key{Key: string(kt.root) + `\` + kt.key, Value: cur, Browsers: kt.browsers}
	rk := rec.key(kt.root, kt.key)
	if rk != nil && !filtered {
		k.Browsers = rk.Browsers
	}
	if cur != kt.file.path && (rk == nil || rk.Value != cur) {
		k.Status, k.Detail = Kept, "points at a manifest fillgate did not write; left alone"
		return k, nil
	}
	if filtered && rk != nil {
		if rest := remaining(rk.Browsers, kt.browsers); len(rest) > 0 {
			k.Status, k.Detail = Kept, "still used by "+strings.Join(rest, ", ")
			rk.Browsers = rest
			return k, nil
		}
	}
	k.Status = Removed
	rec.dropKey(kt.root, kt.key)
	if !s.DryRun {
		if err := s.Registry.DeleteKey(kt.root, kt.key); err != nil {
			return k, fmt.Errorf("%w%s", err, s.sudoHint())
		}
	}
	return k, nil
}
