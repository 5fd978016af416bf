package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/fillgate/fillgate/internal/doctor"
)

// Check runs install's checks for doctor (doctor.Run's Setup): the binary
// (version is its version), the unpacked extension, each browser's host
// manifests (present, valid JSON, fillgate's name, running this binary,
// executable, allowing fillgate's extension), Flatpak and Snap installs and
// the agent socket's directory; and says what doctor's other checks need
// to know of them.
func Check(o Options, version string) (doctor.Setup, error) {
	s, err := resolve(o)
	if err != nil {
		return doctor.Setup{}, err
	}
	var d checks
	from := s.installedFrom()
	s.doctorBinary(&d, version, from)
	carried := s.doctorExtension(&d)
	good := s.doctorManifests(&d)
	s.doctorSocket(&d)
	su := doctor.Setup{Checks: d, OS: s.os, Carried: carried, Upgrade: from.Upgrade, Short: s.tilde}
	if good != nil {
		su.Start = "start " + good.Title + " with the extension loaded (" + loadHint(good, s.p.Join(s.DataDir, extensionDirName), s.p) + ")"
	}
	return su, nil
}

// checks are install's doctor checks, in order.
type checks []doctor.Check

func (c *checks) add(x doctor.Check) { *c = append(*c, x) }

// doctorBinary checks the binary the manifests run: version is its
// version, from how it was installed.
func (s *sys) doctorBinary(d *checks, version string, from installedFrom) {
	name := "fillgate"
	if version != "" {
		name = binaryName(version)
	}
	fi, err := s.FS.Stat(s.Binary)
	switch {
	case err != nil:
		d.add(doctor.Check{Name: "binary", Level: doctor.Fail, Detail: fmt.Sprintf("%s: %v", s.Binary, err), Fix: "run fillgate from where it is installed"})
	case s.os != "windows" && fi.Mode().Perm()&0o111 == 0:
		d.add(doctor.Check{Name: "binary", Level: doctor.Fail, Detail: s.Binary + " is not executable", Fix: "chmod +x " + s.Binary})
	case strings.Contains(s.Binary, "go-build"):
		d.add(doctor.Check{Name: "binary", Level: doctor.Warn, Detail: name + " runs from a temporary build folder (" + s.Binary + "); browsers cannot start it once it is gone",
			Fix: "go install fillgate, then run fillgate install"})
	default:
		detail := name + " at " + s.tilde(s.Binary)
		if from.Name != "" {
			detail += ", installed with " + from.Name
		}
		if from.Note != "" {
			detail += " (" + from.Note + ")"
		}
		d.add(doctor.Check{Name: "binary", Level: doctor.OK, Detail: detail})
	}
}

// doctorExtension checks the unpacked extension (the per-user copy, or
// the system-wide one) and returns the version of the one this binary
// carries, "" when it carries none.
func (s *sys) doctorExtension(d *checks) (carried string) {
	want, err := fs.ReadFile(s.ext, "manifest.json")
	if err != nil {
		d.add(doctor.Check{Name: "extension", Level: doctor.Fail, Detail: "this binary carries no extension: " + err.Error()})
		return ""
	}
	carried = extensionVersion(want)
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
		d.add(doctor.Check{Name: "extension", Level: doctor.Warn, Detail: "not unpacked at " + s.tilde(dir), Fix: s.installCmd(nil, false)})
	case string(have) != string(want):
		d.add(doctor.Check{Name: "extension", Level: doctor.Warn,
			Detail: fmt.Sprintf("the copy at %s is version %q; this binary carries %q", s.tilde(dir), extensionVersion(have), carried),
			Fix:    "fillgate install, then reload fillgate on the browser's extensions page"})
	default:
		d.add(doctor.Check{Name: "extension", Level: doctor.OK, Detail: fmt.Sprintf("version %s unpacked at %s", carried, s.tilde(dir))})
	}
	return carried
}

func (s *sys) doctorSocket(d *checks) {
	dir := s.RuntimeDir
	if dir == "" {
		return
	}
	fi, err := s.FS.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add(doctor.Check{Name: "socket dir", Level: doctor.OK, Detail: s.tilde(dir) + " does not exist yet; the host creates it, mode 0700, when it starts"})
		return
	case err != nil:
		d.add(doctor.Check{Name: "socket dir", Level: doctor.Fail, Detail: err.Error()})
		return
	case !fi.IsDir():
		d.add(doctor.Check{Name: "socket dir", Level: doctor.Fail, Detail: dir + " is not a directory", Fix: "rm " + quote(dir)})
		return
	}
	if s.os == "windows" {
		d.add(doctor.Check{Name: "socket dir", Level: doctor.OK, Detail: dir + " (private through its %LOCALAPPDATA% ACL)"})
		return
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		d.add(doctor.Check{Name: "socket dir", Level: doctor.Fail,
			Detail: fmt.Sprintf("%s is owned by uid %d, not by you (uid %d): another user could answer in fillgate's name", dir, uid, os.Getuid()),
			Fix:    "sudo rm -r " + quote(dir)})
		return
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		d.add(doctor.Check{Name: "socket dir", Level: doctor.Fail,
			Detail: fmt.Sprintf("%s has mode %04o; it must be 0700, or other users can reach the agent socket", dir, perm),
			Fix:    "chmod 700 " + quote(dir)})
		return
	}
	sock := s.p.Join(dir, "agent.sock")
	if si, err := s.FS.Stat(sock); err == nil && si.Mode().Perm()&0o077 != 0 {
		d.add(doctor.Check{Name: "socket dir", Level: doctor.Warn,
			Detail: fmt.Sprintf("%s has mode %04o; it should be 0600", sock, si.Mode().Perm()),
			Fix:    "chmod 600 " + quote(sock)})
		return
	}
	d.add(doctor.Check{Name: "socket dir", Level: doctor.OK, Detail: s.tilde(dir) + " is yours, mode 0700"})
}
