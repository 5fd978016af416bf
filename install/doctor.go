package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/fillgate/fillgate/manifest"
)

// Level is how a doctor check came out.
type Level string

// Levels. Only Fail makes Doctor's exit code non-zero.
const (
	OK   Level = "ok"
	Warn Level = "warn"
	Fail Level = "fail"
)

// Check is one line of a doctor report.
type Check struct {
	// Name is what was checked: "binary", "extension", a browser name,
	// "socket dir", "host", "keyring", "policy", "cdp".
	Name  string `json:"name"`
	Level Level  `json:"status"`
	// Detail says what was found.
	Detail string `json:"detail"`
	// Fix is the command or click that mends a warning or failure.
	Fix string `json:"fix,omitempty"`
}

// DoctorReport is every check Doctor ran, in order.
type DoctorReport struct {
	Checks []Check `json:"checks"`
}

func (d *DoctorReport) add(c Check) { d.Checks = append(d.Checks, c) }

// ExitCode is 0 when no check failed, 1 otherwise.
func (d *DoctorReport) ExitCode() int {
	for _, c := range d.Checks {
		if c.Level == Fail {
			return 1
		}
	}
	return 0
}

// JSON is the report as indented JSON.
func (d *DoctorReport) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode doctor report: %w", err)
	}
	return append(b, '\n'), nil
}

// Text is the report for people: one line per check, and under each
// warning or failure the fix.
func (d *DoctorReport) Text() string {
	var b strings.Builder
	fails, warns := 0, 0
	for _, c := range d.Checks {
		fmt.Fprintf(&b, "%-5s %-12s %s\n", c.Level, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(&b, "%-5s %-12s fix: %s\n", "", "", c.Fix)
		}
		switch c.Level {
		case Fail:
			fails++
		case Warn:
			warns++
		}
	}
	switch {
	case fails+warns == 0:
		b.WriteString("\nall ok\n")
	default:
		fmt.Fprintf(&b, "\n%d failed, %d warning(s)\n", fails, warns)
	}
	return b.String()
}

// Probes are what Doctor asks the rest of fillgate, which the CLI wires
// in so that this package needs none of the host's internals. A nil probe
// is not checked.
type Probes struct {
	// Version is the running binary's version.
	Version string
	// Hosts asks every running host for its status over the agent socket
	// (agent.sock, then hosts/*.sock). No host running is (nil, nil); an
	// error means a host could not be asked.
	Hosts func(ctx context.Context) ([]HostStatus, error)
	// Keyring reports whether the OS keyring can be reached.
	Keyring func(ctx context.Context) error
	// Policy validates the policy file; it returns the file's path, or ""
	// when there is none and the defaults apply.
	Policy func(ctx context.Context) (path string, err error)
	// CDP returns the configured CDP endpoint ("" when none) and whether
	// it could be reached.
	CDP func(ctx context.Context) (endpoint string, err error)
}

// HostStatus is what one running host says about itself.
type HostStatus struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
	// Browser is the browser that started the host ("chromium", "firefox",
	// ...), Profile its profile when known, Caller the origin or add-on id
	// it was started for.
	Browser string `json:"browser"`
	Profile string `json:"profile,omitempty"`
	Caller  string `json:"caller,omitempty"`
	Socket  string `json:"socket,omitempty"`
	// Connected says whether the extension is connected now; its version
	// and whether the human paused it in the popup.
	Connected        bool   `json:"connected"`
	ExtensionVersion string `json:"extension_version,omitempty"`
	Paused           bool   `json:"paused"`
}

// Doctor checks, one line each, what fillgate needs to work and says for
// each problem how to mend it: the binary, the unpacked extension, each
// browser's host manifest (present, valid JSON, fillgate's name, running
// this binary, executable, allowing fillgate's extension), Flatpak and
// Snap installs, the agent socket's directory, and, through probes, the
// running hosts and their extensions, the keyring, the policy file and a
// configured CDP endpoint.
func Doctor(ctx context.Context, o Options, probes Probes) *DoctorReport {
	d := &DoctorReport{}
	s, err := resolve(o)
	if err != nil {
		d.add(Check{Name: "setup", Level: Fail, Detail: err.Error()})
		return d
	}
	s.doctorBinary(d, probes.Version)
	s.doctorExtension(d)
	firstBrowser := s.doctorManifests(d)
	s.doctorSocket(d)

	cdpOK := false
	var cdpCheck *Check
	if probes.CDP != nil {
		c := s.doctorCDP(ctx, probes.CDP)
		cdpOK = c.Level == OK && c.Detail != noCDP
		cdpCheck = &c
	}
	if probes.Hosts != nil {
		s.doctorHosts(ctx, d, probes, firstBrowser, cdpOK)
	}
	if probes.Keyring != nil {
		c := Check{Name: "keyring", Level: OK, Detail: "reachable"}
		if err := probes.Keyring(ctx); err != nil {
			c = Check{Name: "keyring", Level: Warn, Detail: "not reachable, so secrets cannot be remembered (typing them each time still works): " + err.Error(), Fix: keyringFix[s.os]}
		}
		d.add(c)
	}
	if probes.Policy != nil {
		path, err := probes.Policy(ctx)
		switch {
		case err != nil:
			c := Check{Name: "policy", Level: Fail, Detail: err.Error(), Fix: "fillgate policy check"}
			if path != "" {
				c.Fix = "fillgate policy check " + path + " (and edit " + path + " where it says)"
			}
			d.add(c)
		case path == "":
			d.add(Check{Name: "policy", Level: OK, Detail: "no policy file; the defaults apply"})
		default:
			d.add(Check{Name: "policy", Level: OK, Detail: "valid: " + s.tilde(path)})
		}
	}
	if cdpCheck != nil {
		d.add(*cdpCheck)
	}
	return d
}

// keyringFix says how to make the keyring reachable, per OS.
var keyringFix = map[string]string{
	"linux":   "start and unlock a Secret Service (GNOME Keyring or KeePassXC with Secret Service on), e.g. log in to a desktop session",
	"darwin":  "unlock the login keychain (Keychain Access → login → Unlock)",
	"windows": "check that Credential Manager works for your account (Control Panel → Credential Manager)",
}

func (s *sys) doctorBinary(d *DoctorReport, version string) {
	name := "fillgate"
	if version != "" {
		name += " " + version
	}
	fi, err := s.FS.Stat(s.Binary)
	switch {
	case err != nil:
		d.add(Check{Name: "binary", Level: Fail, Detail: fmt.Sprintf("%s: %v", s.Binary, err), Fix: "run fillgate from where it is installed"})
	case s.os != "windows" && fi.Mode().Perm()&0o111 == 0:
		d.add(Check{Name: "binary", Level: Fail, Detail: s.Binary + " is not executable", Fix: "chmod +x " + s.Binary})
	case strings.Contains(s.Binary, "go-build"):
		d.add(Check{Name: "binary", Level: Warn, Detail: name + " runs from a temporary build folder (" + s.Binary + "); browsers cannot start it once it is gone",
			Fix: "go install fillgate, then run fillgate install"})
	default:
		d.add(Check{Name: "binary", Level: OK, Detail: name + " at " + s.tilde(s.Binary)})
	}
}

// doctorExtension checks the unpacked extension: the per-user copy, or
// the system-wide one.
func (s *sys) doctorExtension(d *DoctorReport) {
	want, err := fs.ReadFile(s.ext, "manifest.json")
	if err != nil {
		d.add(Check{Name: "extension", Level: Fail, Detail: "this binary carries no extension: " + err.Error()})
		return
	}
	var dirs []string
	if !s.System {
		dirs = append(dirs, s.p.join(s.DataDir, extensionDirName))
	}
	if sys, err := s.expand(systemDataDir[s.os]); err == nil {
		dirs = append(dirs, s.p.join(sys, extensionDirName))
	}
	dir := dirs[0]
	var have []byte
	for _, dd := range dirs {
		if have, err = s.FS.ReadFile(s.p.join(dd, "manifest.json")); err == nil {
			dir = dd
			break
		}
	}
	switch {
	case err != nil:
		d.add(Check{Name: "extension", Level: Warn, Detail: "not unpacked at " + s.tilde(dir), Fix: s.installCmd(nil, false)})
	case string(have) != string(want):
		d.add(Check{Name: "extension", Level: Warn,
			Detail: fmt.Sprintf("the copy at %s is version %q; this binary carries %q", s.tilde(dir), extensionVersion(have), extensionVersion(want)),
			Fix:    "fillgate install, then reload fillgate on the browser's extensions page"})
	default:
		d.add(Check{Name: "extension", Level: OK, Detail: fmt.Sprintf("version %s unpacked at %s", extensionVersion(want), s.tilde(dir))})
	}
}

// doctorManifests checks every browser's manifests and returns a browser
// that has a good one (for the hint on loading the extension), or nil.
func (s *sys) doctorManifests(d *DoctorReport) *Browser {
	var good *Browser
	present := 0
	scopes := []*sys{s}
	if s.UserDataDir == "" {
		sys := *s
		sys.System = true
		scopes = append(scopes, &sys)
	}
	for _, sc := range scopes {
		pl, err := sc.makePlan(false)
		if err != nil {
			d.add(Check{Name: "manifests", Level: Fail, Detail: err.Error()})
			return nil
		}
		rec, err := sc.loadRecord(pl.dataDir)
		if err != nil {
			d.add(Check{Name: "record", Level: Warn, Detail: err.Error(), Fix: "rm " + sc.p.join(pl.dataDir, recordName)})
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
				if ok && good == nil {
					good = Lookup(kt.browsers[0])
				}
			}
			continue
		}
		for _, ft := range pl.files {
			n, ok := sc.doctorFile(d, ft, ft.family, rec, found)
			present += n
			if ok && good == nil {
				good = Lookup(ft.browsers[0])
			}
		}
		for _, sb := range pl.sandboxed {
			if sc.System {
				continue // reported once, with the user scope
			}
			c := Check{Name: sb.Browser, Level: Warn, Detail: sb.Detail}
			if sb.Works && sb.Kind == "snap" {
				c.Level = OK
			}
			d.add(c)
		}
	}
	if present == 0 {
		d.add(Check{Name: "manifests", Level: Fail, Detail: "no browser has fillgate's host manifest, so no browser can start fillgate", Fix: s.installCmd(s.Browsers, false)})
	}
	return good
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
		if b := Lookup(n); b != nil {
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
// and whether it is entirely right.
func (s *sys) doctorFile(d *DoctorReport, ft *fileTarget, fam manifest.Family, rec *record, found map[string]string) (int, bool) {
	var recorded []string
	if rf := rec.file(ft.path); rf != nil {
		recorded = rf.Browsers
	}
	browsers := relevant(ft.browsers, recorded, found)
	name := strings.Join(browsers, ",")
	have, err := s.FS.ReadFile(ft.path)
	if errors.Is(err, fs.ErrNotExist) {
		if ev := detected(ft.browsers, found); ev != "" && !s.System {
			d.add(Check{Name: name, Level: Warn,
				Detail: fmt.Sprintf("%s is installed (%s) but has no host manifest at %s, so it cannot start fillgate", titles(browsers), s.tilde(ev), s.tilde(ft.path)),
				Fix:    s.installCmd(browsers, false)})
		}
		return 0, false
	}
	if err != nil {
		d.add(Check{Name: name, Level: Fail, Detail: fmt.Sprintf("cannot read %s: %v", ft.path, err)})
		return 1, false
	}
	return 1, s.doctorManifest(d, name, ft.path, browsers, fam, have, s.ours(rec, ft.path, fam, have))
}

// doctorKey checks one Windows registry key and the manifest it names.
func (s *sys) doctorKey(d *DoctorReport, kt *keyTarget, rec *record, found map[string]string) (int, bool) {
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
		d.add(Check{Name: name, Level: Fail, Detail: fmt.Sprintf("cannot read %s: %v", key, err)})
		return 0, false
	case !ok:
		if ev := detected(kt.browsers, found); ev != "" && !s.System {
			d.add(Check{Name: name, Level: Warn,
				Detail: fmt.Sprintf("%s is installed (%s) but the registry has no %s, so it cannot find fillgate", titles(browsers), ev, key),
				Fix:    s.installCmd(browsers, false)})
		}
		return 0, false
	}
	rk := rec.key(kt.root, kt.key)
	keyOurs := cur == kt.file.path || (rk != nil && rk.Value == cur)
	have, err := s.FS.ReadFile(cur)
	if err != nil {
		d.add(Check{Name: name, Level: Fail, Detail: fmt.Sprintf("%s points at %s, which cannot be read: %v", key, cur, err),
			Fix: s.installCmd(browsers, !keyOurs)})
		return 1, false
	}
	ours := keyOurs && s.ours(rec, cur, kt.file.family, have)
	return 1, s.doctorManifest(d, name, cur, browsers, kt.file.family, have, ours)
}

// doctorManifest checks a manifest's content and the binary it runs.
func (s *sys) doctorManifest(d *DoctorReport, name, path string, browsers []string, fam manifest.Family, have []byte, ours bool) bool {
	fix := s.installCmd(browsers, !ours)
	h, err := manifest.Parse(have)
	if err != nil {
		d.add(Check{Name: name, Level: Fail, Detail: s.tilde(path) + " is " + err.Error(), Fix: fix})
		return false
	}
	okay := true
	for _, p := range h.Check(fam, s.p.isAbs) {
		d.add(Check{Name: name, Level: Fail, Detail: fmt.Sprintf("%s: %s %s", s.tilde(path), p.Field, p.Detail), Fix: fix})
		okay = false
	}
	if h.Path == "" || !s.p.isAbs(h.Path) {
		return false
	}
	real, err := s.FS.EvalSymlinks(h.Path)
	if err != nil {
		real = h.Path
	}
	fi, err := s.FS.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add(Check{Name: name, Level: Fail,
			Detail: fmt.Sprintf("%s points at %s, which does not exist: the binary was moved or deleted", s.tilde(path), h.Path),
			Fix:    fix})
		return false
	case err != nil:
		d.add(Check{Name: name, Level: Fail, Detail: fmt.Sprintf("%s points at %s: %v", s.tilde(path), h.Path, err), Fix: fix})
		return false
	case !fi.Mode().IsRegular():
		d.add(Check{Name: name, Level: Fail, Detail: fmt.Sprintf("%s points at %s, which is not a file", s.tilde(path), h.Path), Fix: fix})
		return false
	case s.os != "windows" && fi.Mode().Perm()&0o111 == 0:
		d.add(Check{Name: name, Level: Fail, Detail: fmt.Sprintf("%s runs %s, which is not executable", s.tilde(path), h.Path), Fix: "chmod +x " + quote(h.Path)})
		return false
	case real != s.Binary:
		d.add(Check{Name: name, Level: Warn,
			Detail: fmt.Sprintf("%s runs %s, not this binary (%s)", s.tilde(path), h.Path, s.Binary),
			Fix:    fix})
		return false
	}
	if okay {
		d.add(Check{Name: name, Level: OK, Detail: fmt.Sprintf("%s starts %s for fillgate's extension", s.tilde(path), s.tilde(h.Path))})
	}
	return okay
}

func (s *sys) doctorSocket(d *DoctorReport) {
	dir := s.RuntimeDir
	if dir == "" {
		return
	}
	fi, err := s.FS.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add(Check{Name: "socket dir", Level: OK, Detail: s.tilde(dir) + " does not exist yet; the host creates it, mode 0700, when it starts"})
		return
	case err != nil:
		d.add(Check{Name: "socket dir", Level: Fail, Detail: err.Error()})
		return
	case !fi.IsDir():
		d.add(Check{Name: "socket dir", Level: Fail, Detail: dir + " is not a directory", Fix: "rm " + quote(dir)})
		return
	}
	if s.os == "windows" {
		d.add(Check{Name: "socket dir", Level: OK, Detail: dir + " (private through its %LOCALAPPDATA% ACL)"})
		return
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		d.add(Check{Name: "socket dir", Level: Fail,
			Detail: fmt.Sprintf("%s is owned by uid %d, not by you (uid %d): another user could answer in fillgate's name", dir, uid, os.Getuid()),
			Fix:    "sudo rm -r " + quote(dir)})
		return
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		d.add(Check{Name: "socket dir", Level: Fail,
			Detail: fmt.Sprintf("%s has mode %04o; it must be 0700, or other users can reach the agent socket", dir, perm),
			Fix:    "chmod 700 " + quote(dir)})
		return
	}
	sock := s.p.join(dir, "agent.sock")
	if si, err := s.FS.Stat(sock); err == nil && si.Mode().Perm()&0o077 != 0 {
		d.add(Check{Name: "socket dir", Level: Warn,
			Detail: fmt.Sprintf("%s has mode %04o; it should be 0600", sock, si.Mode().Perm()),
			Fix:    "chmod 600 " + quote(sock)})
		return
	}
	d.add(Check{Name: "socket dir", Level: OK, Detail: s.tilde(dir) + " is yours, mode 0700"})
}

// noCDP is the detail of the cdp check when none is configured.
const noCDP = "no CDP endpoint configured (the extension does not need one)"

func (s *sys) doctorCDP(ctx context.Context, probe func(context.Context) (string, error)) Check {
	endpoint, err := probe(ctx)
	switch {
	case endpoint == "" && err == nil:
		return Check{Name: "cdp", Level: OK, Detail: noCDP}
	case err != nil:
		return Check{Name: "cdp", Level: Warn, Detail: fmt.Sprintf("the configured CDP endpoint %s cannot be reached: %v", endpoint, err),
			Fix: "start the browser it names with --remote-debugging-port, or remove the endpoint from fillgate's configuration"}
	}
	return Check{Name: "cdp", Level: OK, Detail: "the configured CDP endpoint " + endpoint + " answers"}
}

func (s *sys) doctorHosts(ctx context.Context, d *DoctorReport, probes Probes, good *Browser, cdpOK bool) {
	hosts, err := probes.Hosts(ctx)
	extDir := s.p.join(s.DataDir, extensionDirName)
	want := ""
	if m, err := fs.ReadFile(s.ext, "manifest.json"); err == nil {
		want = extensionVersion(m)
	}
	if err != nil {
		d.add(Check{Name: "host", Level: Fail, Detail: "could not ask the running host: " + err.Error(),
			Fix: "restart the browser, which restarts the host"})
		return
	}
	if len(hosts) == 0 {
		c := Check{Name: "host", Level: Fail, Detail: "no fillgate host is running: no browser has fillgate's extension connected"}
		if cdpOK {
			c.Level = Warn
			c.Detail += "; fills use the CDP fallback"
		}
		switch {
		case good != nil:
			c.Fix = "start " + good.Title + " with the extension loaded (" + loadHint(good, extDir, s.p) + "); the browser starts the host when the extension loads"
		default:
			c.Fix = "run fillgate install, then load the extension as it says; the browser starts the host when the extension loads"
		}
		d.add(c)
		return
	}
	for _, h := range hosts {
		name := fmt.Sprintf("host %d", h.PID)
		where := h.Browser
		if h.Profile != "" {
			where += " (profile " + h.Profile + ")"
		}
		page := "the browser's extensions page"
		if b := Lookup(h.Browser); b != nil {
			page = b.Page
		}
		switch {
		case !h.Connected:
			d.add(Check{Name: name, Level: Fail, Detail: "runs for " + where + ", but its extension is not connected", Fix: "reload fillgate on " + page})
		case h.Paused:
			d.add(Check{Name: name, Level: Warn, Detail: "fillgate is paused in " + where, Fix: "open fillgate's popup in the toolbar and turn it back on"})
		case want != "" && h.ExtensionVersion != want:
			d.add(Check{Name: name, Level: Warn, Detail: fmt.Sprintf("%s runs extension %q; this binary carries %q", where, h.ExtensionVersion, want),
				Fix: "fillgate install, then reload fillgate on " + page})
		case probes.Version != "" && h.Version != probes.Version:
			d.add(Check{Name: name, Level: Warn, Detail: fmt.Sprintf("%s runs host %q; this binary is %q", where, h.Version, probes.Version),
				Fix: "restart the browser so it starts this binary"})
		default:
			d.add(Check{Name: name, Level: OK, Detail: fmt.Sprintf("%s, extension %s connected", where, h.ExtensionVersion)})
		}
	}
}
