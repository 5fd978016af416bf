//go:build !windows

package install

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/extension"
	"github.com/fillgate/fillgate/internal/doctor"
	"github.com/fillgate/fillgate/internal/manifest"
)

const runDir = "/run/user/1000/fillgate"

func embeddedVersion(t *testing.T) string {
	t.Helper()
	b, err := extension.Files.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	v := extensionVersion(b)
	if len(v) == 0 {
		t.Fatalf("extensionVersion of extension/manifest.json is empty, want the version")
	}
	return v
}

// healthy are probes that find nothing wrong: one host, its extension
// connected.
func healthy(t *testing.T) doctor.Probes {
	v := embeddedVersion(t)
	return doctor.Probes{
		Version: "0.1.0",
		Hosts: func(context.Context) ([]doctor.HostStatus, error) {
			return []doctor.HostStatus{{PID: 4242, Version: "0.1.0", Browser: "chrome", Profile: "Default", Connected: true, ExtensionVersion: v}}, nil
		},
		Keyring: func(context.Context) error { return nil },
		Policy:  func(context.Context) (string, error) { return "", nil },
		CDP:     func(context.Context) (string, error) { return "", nil },
	}
}

// doctorHome is a Linux home after `fillgate install --browser chrome
// --browser firefox`, with the socket directory a running host made.
func doctorHome(t *testing.T) (*linuxHome, Options) {
	t.Helper()
	h := newLinuxHome(t)
	_, err := Install(context.Background(), h.opts("chrome", "firefox"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(h.real(runDir), 0o700); err != nil {
		t.Fatal(err)
	}
	o := h.opts()
	o.RuntimeDir = runDir
	return h, o
}

// only returns the checks that are not ok.
func notOK(d *doctor.Report) []doctor.Check {
	var out []doctor.Check
	for _, c := range d.Checks {
		if c.Level != doctor.OK {
			out = append(out, c)
		}
	}
	return out
}

func TestDoctorAllOKAfterInstall(t *testing.T) {
	_, o := doctorHome(t)
	d := runDoctor(context.Background(), o, healthy(t))
	if got := notOK(d); len(got) != 0 {
		t.Errorf("notOK(d) = %v, want it empty", got)
	}
	if got := d.ExitCode(); got != 0 {
		t.Errorf("d.ExitCode() = %v, want %v", got, 0)
	}
	var names []string
	for _, c := range d.Checks {
		names = append(names, c.Name)
	}
	if want := []string{"binary", "extension", "chrome", "firefox", "socket dir", "host 4242", "keyring", "policy", "cdp"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	txt := d.Text()
	if !strings.Contains(txt, "ok    binary       fillgate 0.1.0 at /opt/fillgate/bin/fillgate\n") {
		t.Errorf("got %q; want it to contain %q", txt, "ok    binary       fillgate 0.1.0 at /opt/fillgate/bin/fillgate\n")
	}
	if !strings.Contains(txt, "ok    chrome       ~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json starts /opt/fillgate/bin/fillgate for fillgate's extension\n") {
		t.Errorf("got %q; want it to contain %q", txt, "ok    chrome       ~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json starts /opt/fillgate/bin/fillgate for fillgate's extension\n")
	}
	if !strings.Contains(txt, "ok    socket dir   /run/user/1000/fillgate is yours, mode 0700\n") {
		t.Errorf("got %q; want it to contain %q", txt, "ok    socket dir   /run/user/1000/fillgate is yours, mode 0700\n")
	}
	if !strings.Contains(txt, "ok    host 4242    chrome (profile Default), extension "+embeddedVersion(t)+" connected\n") {
		t.Errorf("got %q; want it to contain %q", txt, "ok    host 4242    chrome (profile Default), extension "+embeddedVersion(t)+" connected\n")
	}
	if !strings.HasSuffix(txt, "\nall ok\n") {
		t.Errorf("the report is %q; want it to end in \"\\nall ok\\n\"", txt)
	}
}

// the one failing check Doctor must name, with its fix
func requireOnly(t *testing.T, d *doctor.Report, name string, level doctor.Level, detail, fix string) {
	t.Helper()
	bad := notOK(d)
	if len(bad) != 1 {
		t.Fatalf("%s: bad has %d items (%v), want %d", d.Text(), len(bad), bad, 1)
	}
	if bad[0].Name != name {
		t.Errorf("bad[0].Name = %v, want %v", bad[0].Name, name)
	}
	if bad[0].Level != level {
		t.Errorf("bad[0].Level = %v, want %v", bad[0].Level, level)
	}
	if !strings.Contains(bad[0].Detail, detail) {
		t.Errorf("got %q; want it to contain %q", bad[0].Detail, detail)
	}
	if bad[0].Fix != fix {
		t.Errorf("bad[0].Fix = %v, want %v", bad[0].Fix, fix)
	}
	want := 0
	if level == doctor.Fail {
		want = 1
	}
	if got := d.ExitCode(); got != want {
		t.Errorf("d.ExitCode() = %v, want %v", got, want)
	}
	if got := d.Text(); !strings.Contains(got, "fix: "+fix+"\n") {
		t.Errorf("got %q; want it to contain %q", got, "fix: "+fix+"\n")
	}
}

func TestDoctorBinaryMovedAfterInstall(t *testing.T) {
	h, o := doctorHome(t)
	if err := os.MkdirAll(h.real("/usr/local/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(h.real(h.bin), h.real("/usr/local/bin/fillgate")); err != nil {
		t.Fatal(err)
	}
	o.Binary = "/usr/local/bin/fillgate"
	d := runDoctor(context.Background(), o, healthy(t))
	bad := notOK(d)
	if len(bad) != 2 {
		t.Fatalf("%v: bad has %d items (%v), want %d", d.Text(), len(bad), bad, 2)
	}
	for i, name := range []string{"chrome", "firefox"} {
		if bad[i].Name != name {
			t.Errorf("bad[i].Name = %v, want %v", bad[i].Name, name)
		}
		if bad[i].Level != doctor.Fail {
			t.Errorf("bad[i].Level = %v, want %v", bad[i].Level, doctor.Fail)
		}
		if !strings.Contains(bad[i].Detail, "points at /opt/fillgate/bin/fillgate, which does not exist: the binary was moved or deleted") {
			t.Errorf("got %q; want it to contain %q", bad[i].Detail, "points at /opt/fillgate/bin/fillgate, which does not exist: the binary was moved or deleted")
		}
		if want := "fillgate install --browser " + name; bad[i].Fix != want {
			t.Errorf("fillgate's own manifest: no --force needed: got %v, want %v", bad[i].Fix, want)
		}
	}
	if got := d.ExitCode(); got != 1 {
		t.Errorf("d.ExitCode() = %v, want %v", got, 1)
	}

	// The fix works.
	o.Browsers = []string{"chrome", "firefox"}
	_, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.Browsers = nil
	if got := notOK(runDoctor(context.Background(), o, healthy(t))); len(got) != 0 {
		t.Errorf("notOK(runDoctor(context.Background(), o, healthy(t))) = %v, want it empty", got)
	}
}

func TestDoctorWrongExtensionID(t *testing.T) {
	h, o := doctorHome(t)
	other := "chrome-extension://" + strings.Repeat("c", 32) + "/"
	b := strings.Replace(h.read(t, chromePath), manifest.ExtensionOrigin, other, 1)
	if err := os.WriteFile(h.real(chromePath), []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	d := runDoctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "chrome", doctor.Fail,
		"allowed_origins does not list "+manifest.ExtensionOrigin+" (it lists "+other+")",
		"fillgate install --browser chrome --force")

	o.Browsers, o.Force = []string{"chrome"}, true
	_, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.Browsers = nil
	if got := notOK(runDoctor(context.Background(), o, healthy(t))); len(got) != 0 {
		t.Errorf("notOK(runDoctor(context.Background(), o, healthy(t))) = %v, want it empty", got)
	}
}

func TestDoctorWrongAddonID(t *testing.T) {
	h, o := doctorHome(t)
	b := strings.Replace(h.read(t, firefoxPath), manifest.FirefoxID, "someone@else.example", 1)
	if err := os.WriteFile(h.real(firefoxPath), []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	d := runDoctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "firefox", doctor.Fail,
		"allowed_extensions does not list fillgate@fillgate.dev (it lists someone@else.example)",
		"fillgate install --browser firefox --force")
}

func TestDoctorInvalidJSON(t *testing.T) {
	h, o := doctorHome(t)
	if err := os.WriteFile(h.real(chromePath), []byte("{\n  \"name\": \"dev.fillgate.host\",\n  \"path\": /opt\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := runDoctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "chrome", doctor.Fail,
		"~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json is not valid JSON: line 3, column",
		"fillgate install --browser chrome --force")
}

func TestDoctorNonExecutableBinary(t *testing.T) {
	h, o := doctorHome(t)
	if err := os.Chmod(h.real(h.bin), 0o644); err != nil {
		t.Fatal(err)
	}
	d := runDoctor(context.Background(), o, healthy(t))
	bad := notOK(d)
	if len(bad) != 3 {
		t.Fatalf("%v: bad has %d items (%v), want %d", d.Text(), len(bad), bad, 3)
	}
	if want := (doctor.Check{Name: "binary", Level: doctor.Fail, Detail: "/opt/fillgate/bin/fillgate is not executable", Fix: "chmod +x /opt/fillgate/bin/fillgate"}); !reflect.DeepEqual(bad[0], want) {
		t.Errorf("bad[0] = %v, want %v", bad[0], want)
	}
	for _, c := range bad[1:] {
		if c.Level != doctor.Fail {
			t.Errorf("c.Level = %v, want %v", c.Level, doctor.Fail)
		}
		if !strings.Contains(c.Detail, "runs /opt/fillgate/bin/fillgate, which is not executable") {
			t.Errorf("got %q; want it to contain %q", c.Detail, "runs /opt/fillgate/bin/fillgate, which is not executable")
		}
		if c.Fix != "chmod +x /opt/fillgate/bin/fillgate" {
			t.Errorf("c.Fix = %q, want %q", c.Fix, "chmod +x /opt/fillgate/bin/fillgate")
		}
	}
	if got := d.ExitCode(); got != 1 {
		t.Errorf("d.ExitCode() = %v, want %v", got, 1)
	}
}

func TestDoctorSocketDirWithLooseModes(t *testing.T) {
	h, o := doctorHome(t)
	if err := os.Chmod(h.real(runDir), 0o755); err != nil {
		t.Fatal(err)
	}
	d := runDoctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "socket dir", doctor.Fail,
		"/run/user/1000/fillgate has mode 0755; it must be 0700, or other users can reach the agent socket",
		"chmod 700 /run/user/1000/fillgate")
}

func TestDoctorLooseSocket(t *testing.T) {
	h, o := doctorHome(t)
	if err := os.WriteFile(h.real(runDir+"/agent.sock"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(h.real(runDir+"/agent.sock"), 0o666); err != nil {
		t.Fatal(err)
	}
	d := runDoctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "socket dir", doctor.Warn, "agent.sock has mode 0666; it should be 0600", "chmod 600 /run/user/1000/fillgate/agent.sock")
}

func TestDoctorSocketDirNotCreatedYet(t *testing.T) {
	h, o := doctorHome(t)
	if err := os.Remove(h.real(runDir)); err != nil {
		t.Fatal(err)
	}
	d := runDoctor(context.Background(), o, healthy(t))
	if got := notOK(d); len(got) != 0 {
		t.Errorf("notOK(d) = %v, want it empty", got)
	}
	if got := d.Text(); !strings.Contains(got, "/run/user/1000/fillgate does not exist yet; the host creates it, mode 0700, when it starts") {
		t.Errorf("got %q; want it to contain %q", got, "/run/user/1000/fillgate does not exist yet; the host creates it, mode 0700, when it starts")
	}
}

func TestDoctorNoHostRunning(t *testing.T) {
	_, o := doctorHome(t)
	p := healthy(t)
	p.Hosts = func(context.Context) ([]doctor.HostStatus, error) { return nil, nil }
	d := runDoctor(context.Background(), o, p)
	requireOnly(t, d, "host", doctor.Fail,
		"no fillgate host is running: no browser has fillgate's extension connected",
		`start Google Chrome with the extension loaded (Open chrome://extensions → Turn on "Developer mode" (top right) → Click "Load unpacked" and choose /home/u/.local/share/fillgate/extension); the browser starts the host when the extension loads`)

	// With a CDP endpoint that answers, fills still work: a warning.
	p.CDP = func(context.Context) (string, error) { return "127.0.0.1:9222", nil }
	d = runDoctor(context.Background(), o, p)
	bad := notOK(d)
	if len(bad) != 1 {
		t.Fatalf("bad has %d items (%v), want %d", len(bad), bad, 1)
	}
	if bad[0].Level != doctor.Warn {
		t.Errorf("bad[0].Level = %v, want %v", bad[0].Level, doctor.Warn)
	}
	if !strings.Contains(bad[0].Detail, "fills use the CDP fallback") {
		t.Errorf("got %q; want it to contain %q", bad[0].Detail, "fills use the CDP fallback")
	}
	if got := d.ExitCode(); got != 0 {
		t.Errorf("d.ExitCode() = %v, want %v", got, 0)
	}
}

func TestDoctorNoManifestAnywhere(t *testing.T) {
	h := newLinuxHome(t)
	o := h.opts()
	o.RuntimeDir = runDir
	d := runDoctor(context.Background(), o, doctor.Probes{})
	bad := notOK(d)
	if len(bad) != 2 {
		t.Fatalf("%v: bad has %d items (%v), want %d", d.Text(), len(bad), bad, 2)
	}
	if want := (doctor.Check{Name: "extension", Level: doctor.Warn, Detail: "not unpacked at ~/.local/share/fillgate/extension", Fix: "fillgate install"}); !reflect.DeepEqual(bad[0], want) {
		t.Errorf("bad[0] = %v, want %v", bad[0], want)
	}
	if want := (doctor.Check{Name: "manifests", Level: doctor.Fail, Detail: "no browser has fillgate's host manifest, so no browser can start fillgate", Fix: "fillgate install"}); !reflect.DeepEqual(bad[1], want) {
		t.Errorf("bad[1] = %v, want %v", bad[1], want)
	}
	if got := d.ExitCode(); got != 1 {
		t.Errorf("d.ExitCode() = %v, want %v", got, 1)
	}
}

func TestDoctorFoundBrowserWithoutManifest(t *testing.T) {
	h, o := doctorHome(t)
	if err := os.MkdirAll(h.real("/home/u/.config/chromium"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.real("/home/u/.config/chromium/Local State"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	requireOnly(t, runDoctor(context.Background(), o, healthy(t)), "chromium", doctor.Warn,
		"Chromium is installed (~/.config/chromium/Local State) but has no host manifest at ~/.config/chromium/NativeMessagingHosts/dev.fillgate.host.json, so it cannot start fillgate",
		"fillgate install --browser chromium")
}

func TestDoctorManifestRunsAnotherBinary(t *testing.T) {
	h, o := doctorHome(t)
	h.writeBin(t, "/usr/local/bin/fillgate")
	o.Binary = "/usr/local/bin/fillgate"
	o.Browsers = []string{"chrome"}
	requireOnly(t, runDoctor(context.Background(), o, healthy(t)), "chrome", doctor.Warn,
		"runs /opt/fillgate/bin/fillgate, not this binary (/usr/local/bin/fillgate)", "fillgate install --browser chrome")
}

func TestDoctorOutdatedExtension(t *testing.T) {
	h, o := doctorHome(t)
	if err := os.WriteFile(h.real(filepath.Join(h.data, "extension", "manifest.json")), []byte(`{"version": "0.0.1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	requireOnly(t, runDoctor(context.Background(), o, healthy(t)), "extension", doctor.Warn,
		`the copy at ~/.local/share/fillgate/extension is version "0.0.1"; this binary carries "`+embeddedVersion(t)+`"`,
		"fillgate install, then reload fillgate on the browser's extensions page")
}

func TestDoctorUserDataDir(t *testing.T) {
	h := newLinuxHome(t)
	o := h.opts()
	o.UserDataDir = "/tmp/profile"
	_, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.RuntimeDir = runDir
	if err := os.MkdirAll(h.real(runDir), 0o700); err != nil {
		t.Fatal(err)
	}
	d := runDoctor(context.Background(), o, healthy(t))
	if got := notOK(d); len(got) != 0 {
		t.Errorf("%v: notOK(d) = %v, want it empty", d.Text(), got)
	}
	if got := d.Text(); !strings.Contains(got, "ok    chromium     /tmp/profile/NativeMessagingHosts/dev.fillgate.host.json starts") {
		t.Errorf("got %q; want it to contain %q", got, "ok    chromium     /tmp/profile/NativeMessagingHosts/dev.fillgate.host.json starts")
	}

	if err := os.WriteFile(h.real("/tmp/profile/NativeMessagingHosts/dev.fillgate.host.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	d = runDoctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "chromium", doctor.Fail, "is not valid JSON", "fillgate install --user-data-dir /tmp/profile --force")
}

func TestDoctorFindsUserDataDirInstallsByTheRecord(t *testing.T) {
	h := newLinuxHome(t)
	o := h.opts()
	o.Browsers = []string{"chromium"}
	o.UserDataDir = "/tmp/profile"
	_, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// Plain `fillgate doctor`: no --user-data-dir.
	plain := h.opts()
	plain.RuntimeDir = runDir
	if err := os.MkdirAll(h.real(runDir), 0o700); err != nil {
		t.Fatal(err)
	}
	d := runDoctor(context.Background(), plain, healthy(t))
	if got := notOK(d); len(got) != 0 {
		t.Errorf("%v: notOK(d) = %v, want it empty", d.Text(), got)
	}
	if got := d.ExitCode(); got != 0 {
		t.Errorf("%s: exit code %d, want 0", d.Text(), got)
	}
	if got := d.Text(); !strings.Contains(got, "ok    chromium     /tmp/profile/NativeMessagingHosts/dev.fillgate.host.json starts") {
		t.Errorf("got %q; want it to contain %q", got, "ok    chromium     /tmp/profile/NativeMessagingHosts/dev.fillgate.host.json starts")
	}

	if err := os.WriteFile(h.real("/tmp/profile/NativeMessagingHosts/dev.fillgate.host.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	d = runDoctor(context.Background(), plain, healthy(t))
	requireOnly(t, d, "chromium", doctor.Fail, "is not valid JSON", "fillgate install --user-data-dir /tmp/profile --force")

	if err := os.Remove(h.real("/tmp/profile/NativeMessagingHosts/dev.fillgate.host.json")); err != nil {
		t.Fatal(err)
	}
	d = runDoctor(context.Background(), plain, healthy(t))
	if got := d.Text(); !strings.Contains(got, "the host manifest fillgate installed at /tmp/profile/NativeMessagingHosts/dev.fillgate.host.json is gone") {
		t.Errorf("got %q; want it to contain %q", got, "the host manifest fillgate installed at /tmp/profile/NativeMessagingHosts/dev.fillgate.host.json is gone")
	}
	if got := d.Text(); !strings.Contains(got, "fillgate install --user-data-dir /tmp/profile") {
		t.Errorf("got %q; want it to contain %q", got, "fillgate install --user-data-dir /tmp/profile")
	}
}

func TestDoctorSystemManifests(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "chromium")
	o.System = true
	_, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.System, o.Browsers = false, nil
	d := runDoctor(context.Background(), o, doctor.Probes{})
	if got := notOK(d); len(got) != 0 {
		t.Errorf("%v: notOK(d) = %v, want it empty", d.Text(), got)
	}
	if got := d.Text(); !strings.Contains(got, "ok    chromium     /etc/chromium/native-messaging-hosts/dev.fillgate.host.json starts /usr/local/bin/fillgate") {
		t.Errorf("got %q; want it to contain %q", got, "ok    chromium     /etc/chromium/native-messaging-hosts/dev.fillgate.host.json starts /usr/local/bin/fillgate")
	}
	o.System = true
	if got := strings.Count(runDoctor(context.Background(), o, doctor.Probes{}).Text(), "/etc/chromium/"); got != 1 {
		t.Errorf("checked once: got %v, want %v", got, 1)
	}
	o.System = false

	if err := m.WriteFile("/etc/chromium/native-messaging-hosts/dev.fillgate.host.json", []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	d = runDoctor(context.Background(), o, doctor.Probes{})
	bad := notOK(d)
	if len(bad) == 0 {
		t.Fatalf("%s: every check ok, want a problem", d.Text())
	}
	if bad[0].Fix != "sudo fillgate install --browser chromium --system --force" {
		t.Errorf("bad[0].Fix = %q, want %q", bad[0].Fix, "sudo fillgate install --browser chromium --system --force")
	}
}

func TestDoctorSandboxedBrowsers(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "firefox")
	_, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	m.put("/snap/bin/chromium", "", 0o755)
	m.put("/snap/bin/firefox", "", 0o755)
	o.Browsers = nil
	d := runDoctor(context.Background(), o, doctor.Probes{})
	bad := notOK(d)
	if len(bad) != 1 {
		t.Fatalf("%v: bad has %d items (%v), want %d", d.Text(), len(bad), bad, 1)
	}
	if bad[0].Name != "chromium" {
		t.Errorf("bad[0].Name = %q, want %q", bad[0].Name, "chromium")
	}
	if !strings.Contains(bad[0].Detail, "Chromium is a Snap") {
		t.Errorf("got %q; want it to contain %q", bad[0].Detail, "Chromium is a Snap")
	}
	if bad[0].Fix != "install Chromium from its vendor's .deb or .rpm, outside the Snap" {
		t.Errorf("bad[0].Fix = %q, want %q", bad[0].Fix, "install Chromium from its vendor's .deb or .rpm, outside the Snap")
	}
	if got := d.Text(); !strings.Contains(got, "ok    firefox      Firefox is a Snap: it starts fillgate through the WebExtensions portal") {
		t.Errorf("got %q; want it to contain %q", got, "ok    firefox      Firefox is a Snap: it starts fillgate through the WebExtensions portal")
	}
}

func TestDoctorWindows(t *testing.T) {
	m, reg := newMemFS(), newMemRegistry()
	o := windowsOpts(m, reg, "chrome", "firefox")
	_, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.Browsers = nil
	d := runDoctor(context.Background(), o, doctor.Probes{})
	if got := notOK(d); len(got) != 0 {
		t.Errorf("%v: notOK(d) = %v, want it empty", d.Text(), got)
	}
	if got := d.Text(); !strings.Contains(got, `ok    chrome       C:\Users\u\AppData\Local\fillgate\NativeMessagingHosts\chromium\dev.fillgate.host.json starts C:\Program Files\fillgate\fillgate.exe`) {
		t.Errorf("got %q; want it to contain %q", got, `ok    chrome       C:\Users\u\AppData\Local\fillgate\NativeMessagingHosts\chromium\dev.fillgate.host.json starts C:\Program Files\fillgate\fillgate.exe`)
	}

	if err := reg.SetDefault(HKCU, `Software\Mozilla\NativeMessagingHosts\dev.fillgate.host`, `D:\gone\host.json`); err != nil {
		t.Fatal(err)
	}
	d = runDoctor(context.Background(), o, doctor.Probes{})
	bad := notOK(d)
	if len(bad) != 1 {
		t.Fatalf("%v: bad has %d items (%v), want %d", d.Text(), len(bad), bad, 1)
	}
	if bad[0].Level != doctor.Fail {
		t.Errorf("bad[0].Level = %v, want %v", bad[0].Level, doctor.Fail)
	}
	if !strings.Contains(bad[0].Detail, `HKCU\Software\Mozilla\NativeMessagingHosts\dev.fillgate.host points at D:\gone\host.json, which cannot be read`) {
		t.Errorf("got %q; want it to contain %q", bad[0].Detail, `HKCU\Software\Mozilla\NativeMessagingHosts\dev.fillgate.host points at D:\gone\host.json, which cannot be read`)
	}
	if bad[0].Fix != "fillgate install --browser firefox --force" {
		t.Errorf("someone changed fillgate's key: got %q, want %q", bad[0].Fix, "fillgate install --browser firefox --force")
	}
}

func TestDoctorJSON(t *testing.T) {
	_, o := doctorHome(t)
	p := healthy(t)
	p.Hosts = func(context.Context) ([]doctor.HostStatus, error) { return nil, nil }
	b, err := runDoctor(context.Background(), o, p).JSON()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Checks []map[string]string `json:"checks"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	last := got.Checks[len(got.Checks)-4]
	if last["name"] != "host" {
		t.Errorf("last[\"name\"] = %q, want %q", last["name"], "host")
	}
	if last["status"] != "fail" {
		t.Errorf("last[\"status\"] = %q, want %q", last["status"], "fail")
	}
	if len(last["fix"]) == 0 {
		t.Errorf("the host check has no fix, want one")
	}
}

func TestDoctorBadOptions(t *testing.T) {
	d := runDoctor(context.Background(), Options{GOOS: "windows", UserDataDir: `C:\p`, Registry: newMemRegistry(), Binary: winBin, DataDir: `C:\d`}, doctor.Probes{})
	if len(d.Checks) != 1 {
		t.Fatalf("d.Checks has %d items (%v), want %d", len(d.Checks), d.Checks, 1)
	}
	if d.Checks[0].Name != "setup" {
		t.Errorf("d.Checks[0].Name = %q, want %q", d.Checks[0].Name, "setup")
	}
	if got := d.ExitCode(); got != 1 {
		t.Errorf("d.ExitCode() = %v, want %v", got, 1)
	}
}

// runDoctor runs doctor over install's checks, as `fillgate doctor` wires
// them.
func runDoctor(ctx context.Context, o Options, p doctor.Probes) *doctor.Report {
	p.Setup = func(context.Context) (doctor.Setup, error) { return Check(o, p.Version) }
	return doctor.Run(ctx, p)
}
