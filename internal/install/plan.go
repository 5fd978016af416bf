package install

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/manifest"
)

// Scopes of a manifest.
const (
	ScopeUser    = "user"
	ScopeSystem  = "system"
	ScopeProfile = "profile" // a --user-data-dir
)

// fileTarget is one manifest file, read by one or more browsers.
type fileTarget struct {
	path     string
	family   manifest.Family
	scope    string
	browsers []string
}

// keyTarget is one Windows registry key naming a manifest file.
type keyTarget struct {
	root     Root
	key      string // full path, ending in the host name
	file     *fileTarget
	browsers []string
}

// plan is what Install writes or Uninstall removes.
type plan struct {
	browsers  []*browsertable.Browser // the browsers the targets are for, in table order
	found     []Found
	skipped   []Skipped
	sandboxed []Sandboxed
	notes     []string
	files     []*fileTarget
	keys      []*keyTarget
	dataDir   string // the extension and record live here
}

// scope is the scope of the plan's manifests.
func (s *sys) scope() string {
	switch {
	case s.UserDataDir != "":
		return ScopeProfile
	case s.System:
		return ScopeSystem
	}
	return ScopeUser
}

// systemDataDir is where --system installs keep the unpacked extension and
// their record, readable by every user (a template of the browser table's
// kind).
var systemDataDir = map[string]string{
	"linux":   "/usr/local/share/fillgate",
	"darwin":  "/Library/Application Support/fillgate",
	"windows": `%ProgramData%\fillgate`,
}

// dataDirFor is where the extension and record go for the options' scope.
func (s *sys) dataDirFor() (string, error) {
	if s.System {
		return s.expand(systemDataDir[s.os], "")
	}
	return s.DataDir, nil
}

// named resolves --browser names.
func (s *sys) named() ([]*browsertable.Browser, error) {
	var out []*browsertable.Browser
	for _, n := range s.Browsers {
		b := browsertable.Lookup(strings.ToLower(n))
		if b == nil {
			return nil, fmt.Errorf("unknown browser %q; fillgate knows: %s", n, strings.Join(browsertable.Names(), ", "))
		}
		if _, ok := b.OS[s.os]; !ok {
			return nil, fmt.Errorf("%s is not available on %s", b.Title, s.GOOS)
		}
		if !slices.ContainsFunc(out, func(x *browsertable.Browser) bool { return x.Name == b.Name }) {
			out = append(out, b)
		}
	}
	return out, nil
}

// makePlan decides which manifests and keys to act on. With detect, a
// browser without --browser is included only when it is found on the
// machine; without, every browser of the table for this OS is.
func (s *sys) makePlan(detect bool) (*plan, error) {
	pl := &plan{}
	var err error
	if pl.dataDir, err = s.dataDirFor(); err != nil {
		return nil, err
	}
	named, err := s.named()
	if err != nil {
		return nil, err
	}
	if s.UserDataDir != "" {
		return s.profilePlan(pl, named)
	}

	candidates := named
	if len(named) == 0 {
		for _, b := range browsertable.Table() {
			if _, ok := b.OS[s.os]; ok {
				candidates = append(candidates, &b)
			}
		}
	}
	for _, b := range candidates {
		d := browsertable.Detect(b, s.vars(""), s.exists)
		for _, sb := range d.Sandboxed {
			pl.sandboxed = append(pl.sandboxed, sandboxNote(b, sb))
		}
		switch {
		case d.Found:
			pl.found = append(pl.found, Found{Browser: b.Name, Evidence: d.Evidence})
		case len(named) > 0 || !detect:
			// asked for by name, or uninstall/doctor: no proof needed
		case b.Family == manifest.Firefox && len(d.Sandboxed) > 0:
			// a sandboxed Firefox reads the host's manifest through the portal
			pl.found = append(pl.found, Found{Browser: b.Name, Evidence: d.Sandboxed[0].Evidence})
		default:
			reason := "not found"
			if len(d.Sandboxed) > 0 {
				reason = "only a sandboxed " + d.Sandboxed[0].Kind + " install was found (see below)"
			} else if len(d.Looked) > 0 {
				var looked []string
				for _, l := range d.Looked {
					looked = append(looked, s.tilde(l))
				}
				reason = "not found (looked for " + strings.Join(looked, ", ") + ")"
			}
			pl.skipped = append(pl.skipped, Skipped{Browser: b.Name, Reason: reason})
			continue
		}
		if err := s.addTargets(pl, b); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// profilePlan is the plan for --user-data-dir: one manifest in the
// profile's NativeMessagingHosts folder.
func (s *sys) profilePlan(pl *plan, named []*browsertable.Browser) (*plan, error) {
	if len(named) == 0 {
		named = []*browsertable.Browser{browsertable.Lookup("chromium")}
	}
	ft := &fileTarget{
		path:   s.p.Join(s.UserDataDir, "NativeMessagingHosts", manifest.FileName),
		family: manifest.Chromium,
		scope:  ScopeProfile,
	}
	for _, b := range named {
		if b.Family != manifest.Chromium {
			return nil, fmt.Errorf("--user-data-dir is for Chromium-family browsers; %s reads its manifests from fixed folders", b.Title)
		}
		if b.Name == "brave" || b.Name == "opera" {
			pl.notes = append(pl.notes, b.Title+" reads host manifests from its default folder whatever --user-data-dir it runs with; install without --user-data-dir if it cannot find the host")
		}
		ft.browsers = append(ft.browsers, b.Name)
		pl.browsers = append(pl.browsers, b)
	}
	pl.files = []*fileTarget{ft}
	return pl, nil
}

// addTargets adds the manifests (and on Windows the keys) browser b reads
// for the plan's scope, sharing targets with browsers that read the same
// place.
func (s *sys) addTargets(pl *plan, b *browsertable.Browser) error {
	places := b.OS[s.os]
	scope := s.scope()
	if s.os == "windows" {
		root, base := HKCU, s.DataDir
		if s.System {
			root = HKLM
			var err error
			if base, err = s.expand(systemDataDir[s.os], ""); err != nil {
				return err
			}
		}
		ft := pl.file(s.p.Join(base, "NativeMessagingHosts", string(b.Family), manifest.FileName), b.Family, scope, b.Name)
		for _, k := range places.Keys {
			pl.key(root, k+`\`+manifest.HostName, ft, b.Name)
		}
		pl.browsers = append(pl.browsers, b)
		return nil
	}
	tmpls := places.User
	if s.System {
		tmpls = slices.Clone(places.System)
		for _, t := range places.SystemIfParent {
			if p, err := s.expand(t, b.Family); err == nil && s.exists(s.p.Dir(p)) {
				tmpls = append(tmpls, t)
			}
		}
		if len(tmpls) == 0 {
			pl.skipped = append(pl.skipped, Skipped{Browser: b.Name, Reason: b.Title + " reads no system-wide folder; install without --system"})
			return nil
		}
	}
	for _, t := range tmpls {
		dir, err := s.expand(t, b.Family)
		if err != nil {
			return fmt.Errorf("%s: %w", b.Name, err)
		}
		pl.file(s.p.Join(dir, manifest.FileName), b.Family, scope, b.Name)
	}
	pl.browsers = append(pl.browsers, b)
	return nil
}

// file returns the plan's target for path, adding it if new.
func (pl *plan) file(path string, f manifest.Family, scope, browser string) *fileTarget {
	for _, t := range pl.files {
		if t.path == path {
			if !slices.Contains(t.browsers, browser) {
				t.browsers = append(t.browsers, browser)
			}
			return t
		}
	}
	t := &fileTarget{path: path, family: f, scope: scope, browsers: []string{browser}}
	pl.files = append(pl.files, t)
	return t
}

// key adds a registry target, sharing it when another browser reads it.
func (pl *plan) key(root Root, key string, ft *fileTarget, browser string) {
	for _, k := range pl.keys {
		if k.root == root && k.key == key {
			if !slices.Contains(k.browsers, browser) {
				k.browsers = append(k.browsers, browser)
			}
			return
		}
	}
	pl.keys = append(pl.keys, &keyTarget{root: root, key: key, file: ft, browsers: []string{browser}})
}
