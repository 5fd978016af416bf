package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/fillgate/fillgate/internal/browsertable"
)

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
	// Refused lists the native-messaging connections the hosts refused in
	// the last day because another was live for the same browser and
	// profile (each the audit log's words, with its time).
	Refused func() []string
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
	// Drive says whether a program can drive the browser, and why; nil
	// when the host does not say.
	Drive *HostDrive `json:"drive,omitempty"`
	// Prompt is the policy's prompt mode for it: auto (also for ""),
	// native or browser.
	Prompt string `json:"prompt,omitempty"`
}

// HostDrive is what a host says about programs that can drive its
// browser: remote debugging, an attached debugger, automation.
type HostDrive struct {
	Driven  bool     `json:"driven"`
	Reasons []string `json:"reasons,omitempty"`
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
			c = Check{Name: "keyring", Level: Warn, Detail: "not usable, so secrets cannot be remembered or filled from it (typing them each time still works): " + err.Error(), Fix: keyringFix[s.os]}
			// The keyring's own reason (locked, not running, …) knows
			// the exact step.
			var f interface{ FixHint() string }
			if errors.As(err, &f) && f.FixHint() != "" {
				c.Fix = f.FixHint()
			}
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
	if probes.Refused != nil {
		d.add(doctorRefused(probes.Refused()))
	}
	return d
}

// doctorRefused is the check of the second connections the hosts refused
// lately: each was a page of the extension opened in a tab, or a program
// driving the browser, trying to play the extension.
func doctorRefused(refused []string) Check {
	if len(refused) == 0 {
		return Check{Name: "extension pages", Level: OK, Detail: "no second connection to the host was refused in the last day"}
	}
	return Check{Name: "extension pages", Level: Warn,
		Detail: fmt.Sprintf("%d second native-messaging connection(s) refused in the last day, while the extension's own was live: "+
			"a page of the extension opened in a tab, or a program driving the browser, tried to play the extension (last: %s)", len(refused), refused[len(refused)-1]),
		Fix: "if you did not open fillgate's popup page in a tab yourself, see what drives the browser (fillgate status) and stop it; fillgate audit lists the refusals"}
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
		name = binaryName(version)
	}
	from := s.installedFrom()
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
		detail := name + " at " + s.tilde(s.Binary)
		if from.Name != "" {
			detail += ", installed with " + from.Name
		}
		if from.Note != "" {
			detail += " (" + from.Note + ")"
		}
		d.add(Check{Name: "binary", Level: OK, Detail: detail})
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
		dirs = append(dirs, s.p.Join(s.DataDir, extensionDirName))
	}
	if sys, err := s.expand(systemDataDir[s.os], ""); err == nil {
		dirs = append(dirs, s.p.Join(sys, extensionDirName))
	}
	dir := dirs[0]
	var have []byte
	for _, dd := range dirs {
		if have, err = s.FS.ReadFile(s.p.Join(dd, "manifest.json")); err == nil {
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
	sock := s.p.Join(dir, "agent.sock")
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

func (s *sys) doctorHosts(ctx context.Context, d *DoctorReport, probes Probes, good *browsertable.Browser, cdpOK bool) {
	hosts, err := probes.Hosts(ctx)
	extDir := s.p.Join(s.DataDir, extensionDirName)
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
		if b := browsertable.Lookup(h.Browser); b != nil {
			page = b.Page
		}
		switch {
		case !h.Connected:
			d.add(Check{Name: name, Level: Fail, Detail: "runs for " + where + ", but its extension is not connected", Fix: "reload fillgate on " + page})
		case h.Paused:
			d.add(Check{Name: name, Level: Warn, Detail: "fillgate is paused in " + where, Fix: "open fillgate's popup in the toolbar and turn it back on"})
		default:
			if c, ok := s.doctorVersions(h, name, where, page, want, probes.Version); ok {
				d.add(c)
				break
			}
			d.add(Check{Name: name, Level: OK, Detail: fmt.Sprintf("%s, extension %s connected", where, h.ExtensionVersion)})
		}
		if c, ok := doctorDrive(h, where); ok {
			d.add(c)
		}
	}
}
