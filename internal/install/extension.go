package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/manifest"
)

// extensionDirName is the unpacked extension's folder in the data
// directory.
const extensionDirName = "extension"

// dirMode is the mode of folders fillgate creates for its data: private
// per user, readable by every user for --system.
func (s *sys) dirMode() fs.FileMode {
	if s.System {
		return 0o755
	}
	return 0o700
}

// extensionFiles lists the embedded extension's files, slash-separated.
func (s *sys) extensionFiles() ([]string, error) {
	var files []string
	err := fs.WalkDir(s.ext, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the embedded extension: %w", err)
	}
	if !slices.Contains(files, "manifest.json") {
		return nil, errors.New("the embedded extension has no manifest.json")
	}
	return files, nil
}

// extensionVersion is the version in an extension manifest.
func extensionVersion(manifestJSON []byte) string {
	var m struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(manifestJSON, &m) != nil {
		return ""
	}
	return m.Version
}

// unpackExtension writes the embedded extension to dir, removes the files
// an earlier install wrote that this version no longer has, and records
// what it wrote. Files in dir that fillgate did not write are left alone.
func (s *sys) unpackExtension(dir string, rec *record) error {
	files, err := s.extensionFiles()
	if err != nil {
		return err
	}
	var old []string
	if rec.Extension != nil && rec.Extension.Dir == dir {
		old = rec.Extension.Files
	}
	for _, f := range files {
		data, err := fs.ReadFile(s.ext, f)
		if err != nil {
			return fmt.Errorf("read embedded %s: %w", f, err)
		}
		dst := s.p.Join(dir, f)
		if have, err := s.FS.ReadFile(dst); err == nil && bytes.Equal(have, data) {
			continue // already there: leave it untouched
		}
		if err := s.FS.MkdirAll(s.p.Dir(dst), s.dirMode()); err != nil {
			return fmt.Errorf("create %s: %w", s.p.Dir(dst), err)
		}
		if err := s.FS.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("unpack the extension: %w", err)
		}
	}
	var gone []string
	for _, f := range old {
		if !slices.Contains(files, f) {
			gone = append(gone, f)
		}
	}
	if err := s.removeExtensionFiles(dir, gone); err != nil {
		return err
	}
	if rec.Extension != nil && rec.Extension.Dir != dir {
		// The data directory moved: the old copy is fillgate's to remove.
		if err := s.removeExtensionFiles(rec.Extension.Dir, rec.Extension.Files); err != nil {
			return err
		}
	}
	rec.Extension = &recordExtension{Dir: dir, Files: files}
	return nil
}

// removeExtensionFiles removes the listed files under dir, then every
// folder they were in that is left empty, dir included.
func (s *sys) removeExtensionFiles(dir string, files []string) error {
	dirs := map[string]bool{dir: true}
	for _, f := range files {
		if strings.Contains(f, "..") {
			return fmt.Errorf("the install record names %q, outside the extension folder", f)
		}
		p := s.p.Join(dir, f)
		if err := s.FS.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
		for d := s.p.Dir(p); len(d) > len(dir); d = s.p.Dir(d) {
			dirs[d] = true
		}
	}
	// Deepest first, so a parent is empty once its children are gone.
	order := make([]string, 0, len(dirs))
	for d := range dirs {
		order = append(order, d)
	}
	sort.Slice(order, func(i, j int) bool { return len(order[i]) > len(order[j]) })
	for _, d := range order {
		entries, err := s.FS.ReadDir(d)
		if err != nil || len(entries) > 0 {
			continue
		}
		if err := s.FS.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", d, err)
		}
	}
	return nil
}

// loadSteps are the clicks that load the unpacked extension in b, and a
// note on them.
func loadSteps(b *browsertable.Browser, dir string, p browsertable.Path) (steps []string, note string) {
	if b.Family == manifest.Firefox {
		return []string{
			"Open " + b.Page,
			"Click \"Load Temporary Add-on…\" and choose " + p.Join(dir, "manifest.json"),
		}, temporaryNote(b.Title + " removes a temporary add-on when it quits")
	}
	toggle := "Turn on \"Developer mode\" (top right)."
	if b.Name == "edge" || b.Name == "edge-beta" || b.Name == "edge-dev" {
		toggle = "Turn on \"Developer mode\" (in the left pane)."
	}
	return []string{
		"Open " + b.Page,
		toggle,
		"Click \"Load unpacked\" and choose " + dir,
	}, ""
}

// temporaryNote completes the note on Firefox's temporary add-ons.
func temporaryNote(who string) string {
	return who + ", so load it again after each restart; a permanent install needs a signed XPI, which fillgate does not ship yet."
}

// loadHint is loadSteps on one line.
func loadHint(b *browsertable.Browser, dir string, p browsertable.Path) string {
	steps, _ := loadSteps(b, dir, p)
	for i := range steps {
		steps[i] = strings.TrimSuffix(steps[i], ".")
	}
	return strings.Join(steps, " → ")
}
