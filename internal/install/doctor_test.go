//go:build !windows

package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/extension"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const runDir = "/run/user/1000/fillgate"

func embeddedVersion(t *testing.T) string {
	t.Helper()
	b, err := extension.Files.ReadFile("manifest.json")
	require.NoError(t, err)
	v := extensionVersion(b)
	require.NotEmpty(t, v)
	return v
}

// healthy are probes that find nothing wrong: one host, its extension
// connected.
func healthy(t *testing.T) Probes {
	v := embeddedVersion(t)
	return Probes{
		Version: "0.1.0",
		Hosts: func(context.Context) ([]HostStatus, error) {
			return []HostStatus{{PID: 4242, Version: "0.1.0", Browser: "chrome", Profile: "Default", Connected: true, ExtensionVersion: v}}, nil
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
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(h.real(runDir), 0o700))
	o := h.opts()
	o.RuntimeDir = runDir
	return h, o
}

// only returns the checks that are not ok.
func notOK(d *DoctorReport) []Check {
	var out []Check
	for _, c := range d.Checks {
		if c.Level != OK {
			out = append(out, c)
		}
	}
	return out
}

func TestDoctorAllOKAfterInstall(t *testing.T) {
	_, o := doctorHome(t)
	d := Doctor(context.Background(), o, healthy(t))
	assert.Empty(t, notOK(d))
	assert.Equal(t, 0, d.ExitCode())
	var names []string
	for _, c := range d.Checks {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"binary", "extension", "chrome", "firefox", "socket dir", "host 4242", "keyring", "policy", "cdp"}, names)
	txt := d.Text()
	assert.Contains(t, txt, "ok    binary       fillgate 0.1.0 at /opt/fillgate/bin/fillgate\n")
	assert.Contains(t, txt, "ok    chrome       ~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json starts /opt/fillgate/bin/fillgate for fillgate's extension\n")
	assert.Contains(t, txt, "ok    socket dir   /run/user/1000/fillgate is yours, mode 0700\n")
	assert.Contains(t, txt, "ok    host 4242    chrome (profile Default), extension "+embeddedVersion(t)+" connected\n")
	assert.True(t, strings.HasSuffix(txt, "\nall ok\n"))
}

// the one failing check Doctor must name, with its fix
func requireOnly(t *testing.T, d *DoctorReport, name string, level Level, detail, fix string) {
	t.Helper()
	bad := notOK(d)
	require.Len(t, bad, 1, "%s", d.Text())
	assert.Equal(t, name, bad[0].Name)
	assert.Equal(t, level, bad[0].Level)
	assert.Contains(t, bad[0].Detail, detail)
	assert.Equal(t, fix, bad[0].Fix)
	want := 0
	if level == Fail {
		want = 1
	}
	assert.Equal(t, want, d.ExitCode())
	assert.Contains(t, d.Text(), "fix: "+fix+"\n")
}

func TestDoctorBinaryMovedAfterInstall(t *testing.T) {
	h, o := doctorHome(t)
	require.NoError(t, os.MkdirAll(h.real("/usr/local/bin"), 0o755))
	require.NoError(t, os.Rename(h.real(h.bin), h.real("/usr/local/bin/fillgate")))
	o.Binary = "/usr/local/bin/fillgate"
	d := Doctor(context.Background(), o, healthy(t))
	bad := notOK(d)
	require.Len(t, bad, 2, d.Text())
	for i, name := range []string{"chrome", "firefox"} {
		assert.Equal(t, name, bad[i].Name)
		assert.Equal(t, Fail, bad[i].Level)
		assert.Contains(t, bad[i].Detail, "points at /opt/fillgate/bin/fillgate, which does not exist: the binary was moved or deleted")
		assert.Equal(t, "fillgate install --browser "+name, bad[i].Fix, "fillgate's own manifest: no --force needed")
	}
	assert.Equal(t, 1, d.ExitCode())

	// The fix works.
	o.Browsers = []string{"chrome", "firefox"}
	_, err := Install(context.Background(), o)
	require.NoError(t, err)
	o.Browsers = nil
	assert.Empty(t, notOK(Doctor(context.Background(), o, healthy(t))))
}

func TestDoctorWrongExtensionID(t *testing.T) {
	h, o := doctorHome(t)
	other := "chrome-extension://" + strings.Repeat("c", 32) + "/"
	b := strings.Replace(h.read(t, chromePath), manifest.ExtensionOrigin, other, 1)
	require.NoError(t, os.WriteFile(h.real(chromePath), []byte(b), 0o644))
	d := Doctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "chrome", Fail,
		"allowed_origins does not list "+manifest.ExtensionOrigin+" (it lists "+other+")",
		"fillgate install --browser chrome --force")

	o.Browsers, o.Force = []string{"chrome"}, true
	_, err := Install(context.Background(), o)
	require.NoError(t, err)
	o.Browsers = nil
	assert.Empty(t, notOK(Doctor(context.Background(), o, healthy(t))))
}

func TestDoctorWrongAddonID(t *testing.T) {
	h, o := doctorHome(t)
	b := strings.Replace(h.read(t, firefoxPath), manifest.FirefoxID, "someone@else.example", 1)
	require.NoError(t, os.WriteFile(h.real(firefoxPath), []byte(b), 0o644))
	d := Doctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "firefox", Fail,
		"allowed_extensions does not list fillgate@fillgate.dev (it lists someone@else.example)",
		"fillgate install --browser firefox --force")
}

func TestDoctorInvalidJSON(t *testing.T) {
	h, o := doctorHome(t)
	require.NoError(t, os.WriteFile(h.real(chromePath), []byte("{\n  \"name\": \"dev.fillgate.host\",\n  \"path\": /opt\n}\n"), 0o644))
	d := Doctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "chrome", Fail,
		"~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json is not valid JSON: line 3, column",
		"fillgate install --browser chrome --force")
}

func TestDoctorNonExecutableBinary(t *testing.T) {
	h, o := doctorHome(t)
	require.NoError(t, os.Chmod(h.real(h.bin), 0o644))
	d := Doctor(context.Background(), o, healthy(t))
	bad := notOK(d)
	require.Len(t, bad, 3, d.Text())
	assert.Equal(t, Check{Name: "binary", Level: Fail, Detail: "/opt/fillgate/bin/fillgate is not executable", Fix: "chmod +x /opt/fillgate/bin/fillgate"}, bad[0])
	for _, c := range bad[1:] {
		assert.Equal(t, Fail, c.Level)
		assert.Contains(t, c.Detail, "runs /opt/fillgate/bin/fillgate, which is not executable")
		assert.Equal(t, "chmod +x /opt/fillgate/bin/fillgate", c.Fix)
	}
	assert.Equal(t, 1, d.ExitCode())
}

func TestDoctorSocketDirWithLooseModes(t *testing.T) {
	h, o := doctorHome(t)
	require.NoError(t, os.Chmod(h.real(runDir), 0o755))
	d := Doctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "socket dir", Fail,
		"/run/user/1000/fillgate has mode 0755; it must be 0700, or other users can reach the agent socket",
		"chmod 700 /run/user/1000/fillgate")
}

func TestDoctorLooseSocket(t *testing.T) {
	h, o := doctorHome(t)
	require.NoError(t, os.WriteFile(h.real(runDir+"/agent.sock"), nil, 0o666))
	require.NoError(t, os.Chmod(h.real(runDir+"/agent.sock"), 0o666))
	d := Doctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "socket dir", Warn, "agent.sock has mode 0666; it should be 0600", "chmod 600 /run/user/1000/fillgate/agent.sock")
}

func TestDoctorSocketDirNotCreatedYet(t *testing.T) {
	h, o := doctorHome(t)
	require.NoError(t, os.Remove(h.real(runDir)))
	d := Doctor(context.Background(), o, healthy(t))
	assert.Empty(t, notOK(d))
	assert.Contains(t, d.Text(), "/run/user/1000/fillgate does not exist yet; the host creates it, mode 0700, when it starts")
}

func TestDoctorNoHostRunning(t *testing.T) {
	_, o := doctorHome(t)
	p := healthy(t)
	p.Hosts = func(context.Context) ([]HostStatus, error) { return nil, nil }
	d := Doctor(context.Background(), o, p)
	requireOnly(t, d, "host", Fail,
		"no fillgate host is running: no browser has fillgate's extension connected",
		`start Google Chrome with the extension loaded (Open chrome://extensions → Turn on "Developer mode" (top right) → Click "Load unpacked" and choose /home/u/.local/share/fillgate/extension); the browser starts the host when the extension loads`)

	// With a CDP endpoint that answers, fills still work: a warning.
	p.CDP = func(context.Context) (string, error) { return "127.0.0.1:9222", nil }
	d = Doctor(context.Background(), o, p)
	bad := notOK(d)
	require.Len(t, bad, 1)
	assert.Equal(t, Warn, bad[0].Level)
	assert.Contains(t, bad[0].Detail, "fills use the CDP fallback")
	assert.Equal(t, 0, d.ExitCode())
}

func TestDoctorHostCannotBeAsked(t *testing.T) {
	_, o := doctorHome(t)
	p := healthy(t)
	p.Hosts = func(context.Context) ([]HostStatus, error) { return nil, errors.New("connection refused") }
	requireOnly(t, Doctor(context.Background(), o, p), "host", Fail, "could not ask the running host: connection refused", "restart the browser, which restarts the host")
}

func TestDoctorHostProblems(t *testing.T) {
	_, o := doctorHome(t)
	v := embeddedVersion(t)
	cases := []struct {
		host   HostStatus
		level  Level
		detail string
		fix    string
	}{
		{HostStatus{PID: 7, Version: "0.1.0", Browser: "chrome"}, Fail, "runs for chrome, but its extension is not connected", "reload fillgate on chrome://extensions"},
		{HostStatus{PID: 7, Version: "0.1.0", Browser: "firefox", Connected: true, Paused: true, ExtensionVersion: v}, Warn, "fillgate is paused in firefox", "open fillgate's popup in the toolbar and turn it back on"},
		{HostStatus{PID: 7, Version: "0.1.0", Browser: "chrome", Connected: true, ExtensionVersion: "0.0.9"}, Warn, `chrome runs extension "0.0.9" with host "0.1.0"; the two must be the same version`, "fillgate install, then reload fillgate on chrome://extensions"},
		{HostStatus{PID: 7, Version: "0.0.9", Browser: "chrome", Connected: true, ExtensionVersion: v}, Warn, `chrome runs extension "` + v + `" with host "0.0.9"`, "fillgate install, then reload fillgate on chrome://extensions"},
		{HostStatus{PID: 7, Version: "0.0.9", Browser: "chrome", Connected: true, ExtensionVersion: "0.0.9"}, Warn, `chrome runs extension "0.0.9"; this binary carries "` + v + `"`, "fillgate install, then reload fillgate on chrome://extensions"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			p := healthy(t)
			p.Hosts = func(context.Context) ([]HostStatus, error) { return []HostStatus{c.host}, nil }
			requireOnly(t, Doctor(context.Background(), o, p), "host 7", c.level, c.detail, c.fix)
		})
	}
}

// lockedKeyring is an error like keychain.Unavailable for a locked keyring.
type lockedKeyring struct{}

func (lockedKeyring) Error() string   { return "the OS keyring is locked: unlock it with Seahorse" }
func (lockedKeyring) FixHint() string { return "unlock it with Seahorse" }

func TestDoctorProbeFailures(t *testing.T) {
	_, o := doctorHome(t)
	p := healthy(t)
	p.Keyring = func(context.Context) error { return errors.New("no Secret Service on the bus") }
	requireOnly(t, Doctor(context.Background(), o, p), "keyring", Warn, "not usable, so secrets cannot be remembered", keyringFix["linux"])

	// A reason that knows its fix (keychain.Unavailable) gives it.
	p = healthy(t)
	p.Keyring = func(context.Context) error { return lockedKeyring{} }
	requireOnly(t, Doctor(context.Background(), o, p), "keyring", Warn, "the OS keyring is locked", "unlock it with Seahorse")

	p = healthy(t)
	p.Policy = func(context.Context) (string, error) {
		return "/home/u/.config/fillgate/policy", errors.New("line 4: unknown key \"allow_al\"")
	}
	requireOnly(t, Doctor(context.Background(), o, p), "policy", Fail, `line 4: unknown key "allow_al"`,
		"fillgate policy check /home/u/.config/fillgate/policy (and edit /home/u/.config/fillgate/policy where it says)")

	p = healthy(t)
	p.CDP = func(context.Context) (string, error) { return "127.0.0.1:9222", errors.New("connection refused") }
	requireOnly(t, Doctor(context.Background(), o, p), "cdp", Warn, "the configured CDP endpoint 127.0.0.1:9222 cannot be reached: connection refused",
		"start the browser it names with --remote-debugging-port, or remove the endpoint from fillgate's configuration")
}

func TestDoctorNoManifestAnywhere(t *testing.T) {
	h := newLinuxHome(t)
	o := h.opts()
	o.RuntimeDir = runDir
	d := Doctor(context.Background(), o, Probes{})
	bad := notOK(d)
	require.Len(t, bad, 2, d.Text())
	assert.Equal(t, Check{Name: "extension", Level: Warn, Detail: "not unpacked at ~/.local/share/fillgate/extension", Fix: "fillgate install"}, bad[0])
	assert.Equal(t, Check{Name: "manifests", Level: Fail, Detail: "no browser has fillgate's host manifest, so no browser can start fillgate", Fix: "fillgate install"}, bad[1])
	assert.Equal(t, 1, d.ExitCode())
}

func TestDoctorFoundBrowserWithoutManifest(t *testing.T) {
	h, o := doctorHome(t)
	require.NoError(t, os.MkdirAll(h.real("/home/u/.config/chromium"), 0o700))
	require.NoError(t, os.WriteFile(h.real("/home/u/.config/chromium/Local State"), []byte("{}"), 0o600))
	requireOnly(t, Doctor(context.Background(), o, healthy(t)), "chromium", Warn,
		"Chromium is installed (~/.config/chromium/Local State) but has no host manifest at ~/.config/chromium/NativeMessagingHosts/dev.fillgate.host.json, so it cannot start fillgate",
		"fillgate install --browser chromium")
}

func TestDoctorManifestRunsAnotherBinary(t *testing.T) {
	h, o := doctorHome(t)
	h.writeBin(t, "/usr/local/bin/fillgate")
	o.Binary = "/usr/local/bin/fillgate"
	o.Browsers = []string{"chrome"}
	requireOnly(t, Doctor(context.Background(), o, healthy(t)), "chrome", Warn,
		"runs /opt/fillgate/bin/fillgate, not this binary (/usr/local/bin/fillgate)", "fillgate install --browser chrome")
}

func TestDoctorOutdatedExtension(t *testing.T) {
	h, o := doctorHome(t)
	require.NoError(t, os.WriteFile(h.real(filepath.Join(h.data, "extension", "manifest.json")), []byte(`{"version": "0.0.1"}`), 0o644))
	requireOnly(t, Doctor(context.Background(), o, healthy(t)), "extension", Warn,
		`the copy at ~/.local/share/fillgate/extension is version "0.0.1"; this binary carries "`+embeddedVersion(t)+`"`,
		"fillgate install, then reload fillgate on the browser's extensions page")
}

func TestDoctorUserDataDir(t *testing.T) {
	h := newLinuxHome(t)
	o := h.opts()
	o.UserDataDir = "/tmp/profile"
	_, err := Install(context.Background(), o)
	require.NoError(t, err)
	o.RuntimeDir = runDir
	require.NoError(t, os.MkdirAll(h.real(runDir), 0o700))
	d := Doctor(context.Background(), o, healthy(t))
	assert.Empty(t, notOK(d), d.Text())
	assert.Contains(t, d.Text(), "ok    chromium     /tmp/profile/NativeMessagingHosts/dev.fillgate.host.json starts")

	require.NoError(t, os.WriteFile(h.real("/tmp/profile/NativeMessagingHosts/dev.fillgate.host.json"), []byte("{"), 0o644))
	d = Doctor(context.Background(), o, healthy(t))
	requireOnly(t, d, "chromium", Fail, "is not valid JSON", "fillgate install --user-data-dir /tmp/profile --force")
}

func TestDoctorFindsUserDataDirInstallsByTheRecord(t *testing.T) {
	h := newLinuxHome(t)
	o := h.opts()
	o.Browsers = []string{"chromium"}
	o.UserDataDir = "/tmp/profile"
	_, err := Install(context.Background(), o)
	require.NoError(t, err)
	// Plain `fillgate doctor`: no --user-data-dir.
	plain := h.opts()
	plain.RuntimeDir = runDir
	require.NoError(t, os.MkdirAll(h.real(runDir), 0o700))
	d := Doctor(context.Background(), plain, healthy(t))
	assert.Empty(t, notOK(d), d.Text())
	assert.Equal(t, 0, d.ExitCode(), d.Text())
	assert.Contains(t, d.Text(), "ok    chromium     /tmp/profile/NativeMessagingHosts/dev.fillgate.host.json starts")

	require.NoError(t, os.WriteFile(h.real("/tmp/profile/NativeMessagingHosts/dev.fillgate.host.json"), []byte("{"), 0o644))
	d = Doctor(context.Background(), plain, healthy(t))
	requireOnly(t, d, "chromium", Fail, "is not valid JSON", "fillgate install --user-data-dir /tmp/profile --force")

	require.NoError(t, os.Remove(h.real("/tmp/profile/NativeMessagingHosts/dev.fillgate.host.json")))
	d = Doctor(context.Background(), plain, healthy(t))
	assert.Contains(t, d.Text(), "the host manifest fillgate installed at /tmp/profile/NativeMessagingHosts/dev.fillgate.host.json is gone")
	assert.Contains(t, d.Text(), "fillgate install --user-data-dir /tmp/profile")
}

func TestDoctorSystemManifests(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "chromium")
	o.System = true
	_, err := Install(context.Background(), o)
	require.NoError(t, err)
	o.System, o.Browsers = false, nil
	d := Doctor(context.Background(), o, Probes{})
	assert.Empty(t, notOK(d), d.Text())
	assert.Contains(t, d.Text(), "ok    chromium     /etc/chromium/native-messaging-hosts/dev.fillgate.host.json starts /usr/local/bin/fillgate")
	o.System = true
	assert.Equal(t, 1, strings.Count(Doctor(context.Background(), o, Probes{}).Text(), "/etc/chromium/"), "checked once")
	o.System = false

	require.NoError(t, m.WriteFile("/etc/chromium/native-messaging-hosts/dev.fillgate.host.json", []byte("[]"), 0o644))
	d = Doctor(context.Background(), o, Probes{})
	bad := notOK(d)
	require.NotEmpty(t, bad)
	assert.Equal(t, "sudo fillgate install --browser chromium --system --force", bad[0].Fix)
}

func TestDoctorSandboxedBrowsers(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "firefox")
	_, err := Install(context.Background(), o)
	require.NoError(t, err)
	m.put("/snap/bin/chromium", "", 0o755)
	m.put("/snap/bin/firefox", "", 0o755)
	o.Browsers = nil
	d := Doctor(context.Background(), o, Probes{})
	bad := notOK(d)
	require.Len(t, bad, 1, d.Text())
	assert.Equal(t, "chromium", bad[0].Name)
	assert.Contains(t, bad[0].Detail, "Chromium is a Snap")
	assert.Equal(t, "install Chromium from its vendor's .deb or .rpm, outside the Snap", bad[0].Fix)
	assert.Contains(t, d.Text(), "ok    firefox      Firefox is a Snap: it starts fillgate through the WebExtensions portal")
}

func TestDoctorWindows(t *testing.T) {
	m, reg := newMemFS(), newMemRegistry()
	o := windowsOpts(m, reg, "chrome", "firefox")
	_, err := Install(context.Background(), o)
	require.NoError(t, err)
	o.Browsers = nil
	d := Doctor(context.Background(), o, Probes{})
	assert.Empty(t, notOK(d), d.Text())
	assert.Contains(t, d.Text(), `ok    chrome       C:\Users\u\AppData\Local\fillgate\NativeMessagingHosts\chromium\dev.fillgate.host.json starts C:\Program Files\fillgate\fillgate.exe`)

	require.NoError(t, reg.SetDefault(HKCU, `Software\Mozilla\NativeMessagingHosts\dev.fillgate.host`, `D:\gone\host.json`))
	d = Doctor(context.Background(), o, Probes{})
	bad := notOK(d)
	require.Len(t, bad, 1, d.Text())
	assert.Equal(t, Fail, bad[0].Level)
	assert.Contains(t, bad[0].Detail, `HKCU\Software\Mozilla\NativeMessagingHosts\dev.fillgate.host points at D:\gone\host.json, which cannot be read`)
	assert.Equal(t, "fillgate install --browser firefox --force", bad[0].Fix, "someone changed fillgate's key")
}

func TestDoctorJSON(t *testing.T) {
	_, o := doctorHome(t)
	p := healthy(t)
	p.Hosts = func(context.Context) ([]HostStatus, error) { return nil, nil }
	b, err := Doctor(context.Background(), o, p).JSON()
	require.NoError(t, err)
	var got struct {
		Checks []map[string]string `json:"checks"`
	}
	require.NoError(t, json.Unmarshal(b, &got))
	last := got.Checks[len(got.Checks)-4]
	assert.Equal(t, "host", last["name"])
	assert.Equal(t, "fail", last["status"])
	assert.NotEmpty(t, last["fix"])
}

func TestDoctorBadOptions(t *testing.T) {
	d := Doctor(context.Background(), Options{GOOS: "windows", UserDataDir: `C:\p`, Registry: newMemRegistry(), Binary: winBin, DataDir: `C:\d`}, Probes{})
	require.Len(t, d.Checks, 1)
	assert.Equal(t, "setup", d.Checks[0].Name)
	assert.Equal(t, 1, d.ExitCode())
}
