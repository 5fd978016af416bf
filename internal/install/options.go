package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/fillgate/fillgate/extension"
	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/manifest"
)

// Options says what Install, Uninstall and Check act on. The zero value
// means: every browser found, per user, the running binary, the real
// environment, filesystem and registry.
type Options struct {
	// Browsers are --browser names (see Table); empty means every browser
	// found on the machine (Install) or every browser fillgate knows
	// (Uninstall, Check).
	Browsers []string
	// System installs for every user: system folders, HKLM on Windows. It
	// usually needs root or Administrator.
	System bool
	// UserDataDir is a Chromium-family --user-data-dir: the manifest goes
	// to UserDataDir/NativeMessagingHosts/ and nowhere else (Linux,
	// macOS).
	UserDataDir string
	// DryRun writes nothing and reports what would be done.
	DryRun bool
	// Force overwrites host manifests and registry keys that are not
	// fillgate's.
	Force bool
	// Binary is the absolute path of the fillgate binary the manifests
	// launch; symlinks are resolved. Default: the running executable.
	Binary string

	// Env looks up environment variables (HOME, XDG_*, PATH, LOCALAPPDATA,
	// ...). Default: os.Getenv.
	Env dirs.Env
	// GOOS is the OS whose paths are used. Default: runtime.GOOS.
	GOOS string
	// FS is the filesystem. Default: OSFS.
	FS FS
	// Registry is the Windows registry; only used when GOOS is "windows".
	// Default: the real registry on Windows.
	Registry Registry
	// DataDir holds the unpacked extension and the record of what install
	// wrote. Default: dirs.Data(Env); required when GOOS is not the
	// running OS.
	DataDir string
	// RuntimeDir is the agent socket's directory, which Check checks.
	// Default: dirs.Runtime(Env) on the running OS; unchecked otherwise.
	RuntimeDir string
	// Extension is the extension to unpack, manifest.json at its root.
	// Default: extension.Files.
	Extension fs.FS
	// Origins are the origins of fillgate's extension that Chromium-family
	// manifests allow, and Check wants. Default (empty): manifest.Listed().
	Origins manifest.Origins
}

// sys is Options resolved: the target OS and the ways to reach it.
type sys struct {
	Options
	os  string // the table column: linux, darwin or windows
	p   browsertable.Path
	ext fs.FS
}

// resolve fills in Options' defaults. It does not need the binary to
// exist; callers that write manifests check it.
func resolve(o Options) (*sys, error) {
	s := &sys{Options: o}
	if s.Env == nil {
		s.Env = os.Getenv
	}
	if s.GOOS == "" {
		s.GOOS = runtime.GOOS
	}
	s.os = browsertable.Column(s.GOOS)
	s.p = browsertable.Path(s.os)
	if s.FS == nil {
		s.FS = OSFS{}
	}
	if s.Registry == nil && s.os == "windows" {
		s.Registry = defaultRegistry()
		if s.Registry == nil {
			return nil, errors.New("no Windows registry here: pass one in Options.Registry")
		}
	}
	s.ext = s.Extension
	if s.ext == nil {
		s.ext = extension.Files
	}
	if len(s.Origins) == 0 {
		s.Origins = manifest.Listed()
	}
	native := s.GOOS == runtime.GOOS
	if s.DataDir == "" {
		if !native {
			return nil, fmt.Errorf("Options.DataDir is required for GOOS %q on %s", s.GOOS, runtime.GOOS)
		}
		d, err := dirs.Data(s.Env)
		if err != nil {
			return nil, fmt.Errorf("find the data directory: %w", err)
		}
		s.DataDir = d
	}
	if s.RuntimeDir == "" && native {
		if d, err := dirs.Runtime(s.Env); err == nil {
			s.RuntimeDir = d
		}
	}
	if s.Binary == "" {
		if !native {
			return nil, fmt.Errorf("Options.Binary is required for GOOS %q on %s", s.GOOS, runtime.GOOS)
		}
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the fillgate binary: %w", err)
		}
		s.Binary = exe
	}
	if !s.p.IsAbs(s.Binary) {
		return nil, fmt.Errorf("the binary path %q is not absolute", s.Binary)
	}
	if real, err := s.FS.EvalSymlinks(s.Binary); err == nil {
		s.Binary = real
	}
	if s.UserDataDir != "" {
		if s.os == "windows" {
			return nil, errors.New("--user-data-dir does not apply on Windows: Chromium finds hosts there through the registry only")
		}
		if !s.p.IsAbs(s.UserDataDir) {
			abs, err := filepath.Abs(s.UserDataDir)
			if err != nil || !native {
				return nil, fmt.Errorf("--user-data-dir %q is not absolute", s.UserDataDir)
			}
			s.UserDataDir = abs
		}
	}
	return s, nil
}

// vars are the browser table's template variables for a browser of family
// f ("" for fillgate's own paths).
func (s *sys) vars(f manifest.Family) browsertable.Vars {
	return browsertable.Vars{OS: s.os, Env: s.Env, Family: f}
}

// home is the user's home directory.
func (s *sys) home() (string, error) { return browsertable.Home(s.vars("")) }

// expand turns a template of the browser table into a path (see
// browsertable.Places) for a browser of family f.
func (s *sys) expand(tmpl string, f manifest.Family) (string, error) {
	return browsertable.Expand(tmpl, s.vars(f))
}

// exists reports whether name exists.
func (s *sys) exists(name string) bool {
	_, err := s.FS.Stat(name)
	return err == nil
}

// tilde shortens a path under the home directory for display.
func (s *sys) tilde(name string) string {
	h, err := s.home()
	if err != nil || s.os == "windows" {
		return name
	}
	if name == h {
		return "~"
	}
	if rest, ok := strings.CutPrefix(name, strings.TrimSuffix(h, "/")+"/"); ok {
		return "~/" + rest
	}
	return name
}
