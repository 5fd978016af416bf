package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/fillgate/fillgate/internal/manifest"
)

// recordName is the file, in the data directory, that lists what install
// wrote, so that uninstall removes exactly that and install can tell its
// own manifests from someone else's.
const recordName = "install.json"

// record is what install wrote.
type record struct {
	Version int          `json:"version"`
	Files   []recordFile `json:"files,omitempty"`
	Keys    []recordKey  `json:"keys,omitempty"`
	// Dirs are the folders install created for manifests; uninstall
	// removes those left empty.
	Dirs []string `json:"dirs,omitempty"`
	// KeyDirs are the registry keys install created above its own keys
	// (NativeMessagingHosts, and the browser's keys when the browser is
	// not installed); uninstall deletes those left empty.
	KeyDirs   []recordKeyDir   `json:"key_dirs,omitempty"`
	Extension *recordExtension `json:"extension,omitempty"`
}

// recordKeyDir is a registry key install created as a parent of its own.
type recordKeyDir struct {
	Root Root   `json:"root"`
	Key  string `json:"key"`
}

// recordFile is a manifest install wrote, with the digest of its content.
type recordFile struct {
	Path     string          `json:"path"`
	Family   manifest.Family `json:"family"`
	SHA256   string          `json:"sha256"`
	Browsers []string        `json:"browsers"`
}

// recordKey is a registry key install set.
type recordKey struct {
	Root     Root     `json:"root"`
	Key      string   `json:"key"`
	Value    string   `json:"value"`
	Browsers []string `json:"browsers"`
}

// recordExtension is the unpacked extension: its folder and the files in
// it, slash-separated and relative to it.
type recordExtension struct {
	Dir   string   `json:"dir"`
	Files []string `json:"files"`
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// loadRecord reads the record in dir; a missing one is empty.
func (s *sys) loadRecord(dir string) (*record, error) {
	p := s.p.Join(dir, recordName)
	b, err := s.FS.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &record{Version: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the install record: %w", err)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("the install record %s is damaged (%v): remove it and run again", p, err)
	}
	return &r, nil
}

// saveRecord writes the record, or removes it when it lists nothing.
func (s *sys) saveRecord(dir string, r *record) error {
	p := s.p.Join(dir, recordName)
	if len(r.Files) == 0 && len(r.Keys) == 0 && len(r.Dirs) == 0 && len(r.KeyDirs) == 0 && r.Extension == nil {
		if err := s.FS.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove the install record: %w", err)
		}
		return nil
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the install record: %w", err)
	}
	if err := s.FS.MkdirAll(dir, s.dirMode()); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := s.FS.WriteFile(p, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write the install record: %w", err)
	}
	return nil
}

func (r *record) file(path string) *recordFile {
	for i := range r.Files {
		if r.Files[i].Path == path {
			return &r.Files[i]
		}
	}
	return nil
}

func (r *record) key(root Root, key string) *recordKey {
	for i := range r.Keys {
		if r.Keys[i].Root == root && r.Keys[i].Key == key {
			return &r.Keys[i]
		}
	}
	return nil
}

// putFile records a written manifest.
func (r *record) putFile(path string, f manifest.Family, sum string, browsers []string) {
	if rf := r.file(path); rf != nil {
		rf.Family, rf.SHA256 = f, sum
		rf.Browsers = union(rf.Browsers, browsers)
		return
	}
	r.Files = append(r.Files, recordFile{Path: path, Family: f, SHA256: sum, Browsers: slices.Clone(browsers)})
}

// putKey records a set registry key.
func (r *record) putKey(root Root, key, value string, browsers []string) {
	if k := r.key(root, key); k != nil {
		k.Value = value
		k.Browsers = union(k.Browsers, browsers)
		return
	}
	r.Keys = append(r.Keys, recordKey{Root: root, Key: key, Value: value, Browsers: slices.Clone(browsers)})
}

func (r *record) dropFile(path string) {
	r.Files = slices.DeleteFunc(r.Files, func(f recordFile) bool { return f.Path == path })
}

func (r *record) dropKey(root Root, key string) {
	r.Keys = slices.DeleteFunc(r.Keys, func(k recordKey) bool { return k.Root == root && k.Key == key })
}

// putKeyDirs records parent keys install created.
func (r *record) putKeyDirs(root Root, keys []string) {
	for _, k := range keys {
		d := recordKeyDir{Root: root, Key: k}
		if !slices.Contains(r.KeyDirs, d) {
			r.KeyDirs = append(r.KeyDirs, d)
		}
	}
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
