package doctor

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/manifest"
)

// carried is the version of the extension the binary under test carries.
const carried = "0.1.0"

// setup is install's part of a healthy machine, as install.Check would
// report it.
var setup = Setup{
	Checks:  []Check{{Name: "binary", Level: OK, Detail: "fillgate 0.1.0 at /opt/fillgate/bin/fillgate"}},
	OS:      "linux",
	Carried: carried,
	Start:   "start Google Chrome with the extension loaded (…)",
	Upgrade: "put the newer release's fillgate where this one is (or go install github.com/fillgate/fillgate@latest)",
	Short:   func(p string) string { return strings.Replace(p, "/home/u", "~", 1) },
}

// healthy are probes that find nothing wrong: one host, its extension
// connected.
func healthy(t *testing.T) Probes {
	t.Helper()
	return Probes{
		Version: "0.1.0",
		Setup:   func(context.Context) (Setup, error) { return setup, nil },
		Hosts: func(context.Context) ([]HostStatus, error) {
			return []HostStatus{{PID: 4242, Version: "0.1.0", Browser: "chrome", Profile: "Default", Connected: true, ExtensionVersion: carried}}, nil
		},
		Keyring: func(context.Context) error { return nil },
		Policy:  func(context.Context) (string, error) { return "", nil },
		CDP:     func(context.Context) (string, error) { return "", nil },
	}
}

// notOK returns the checks that are not ok.
func notOK(d *Report) []Check {
	var out []Check
	for _, c := range d.Checks {
		if c.Level != OK {
			out = append(out, c)
		}
	}
	return out
}

// requireOnly wants name to be the one check that is not ok, at level,
// with detail in its words and fix as its fix.
func requireOnly(t *testing.T, d *Report, name string, level Level, detail, fix string) {
	t.Helper()
	bad := notOK(d)
	if len(bad) != 1 {
		t.Fatalf("%s: bad has %d items (%v), want %d", d.Text(), len(bad), bad, 1)
	}
	if bad[0].Name != name || bad[0].Level != level || !strings.Contains(bad[0].Detail, detail) || bad[0].Fix != fix {
		t.Errorf("the check is %+v; want %s, %s, a detail with %q and the fix %q", bad[0], name, level, detail, fix)
	}
	want := 0
	if level == Fail {
		want = 1
	}
	if got := d.ExitCode(); got != want {
		t.Errorf("d.ExitCode() = %v, want %v", got, want)
	}
	if got := d.Text(); !strings.Contains(got, "fix: "+fix+"\n") {
		t.Errorf("got %q; want it to contain %q", got, "fix: "+fix+"\n")
	}
}

func TestAllOK(t *testing.T) {
	d := Run(context.Background(), healthy(t))
	var names []string
	for _, c := range d.Checks {
		names = append(names, c.Name)
	}
	if want := []string{"binary", "host 4242", "keyring", "policy", "cdp"}; !reflect.DeepEqual(names, want) || len(notOK(d)) != 0 || d.ExitCode() != 0 {
		t.Errorf("%s: checks %v, want %v, all ok", d.Text(), names, want)
	}
}

// TestSetupFails: options install cannot resolve are the one check.
func TestSetupFails(t *testing.T) {
	p := healthy(t)
	p.Setup = func(context.Context) (Setup, error) {
		return Setup{}, errors.New("the binary path \"fillgate\" is not absolute")
	}
	d := Run(context.Background(), p)
	if len(d.Checks) != 1 || d.Checks[0].Name != "setup" || d.Checks[0].Level != Fail || d.ExitCode() != 1 {
		t.Errorf("%s: want the one failed setup check", d.Text())
	}
}

// storeID is an id such as the Chrome Web Store assigns.
const storeID = "abcdefghijklmnopabcdefghijklmnop"

// listedInStore are fillgate's origins once a store lists it as storeID,
// with that store copy's origin.
func listedInStore() (manifest.Origins, string) {
	return manifest.Listed().WithStore(storeID), "chrome-extension://" + storeID + "/"
}

func TestHostCannotBeAsked(t *testing.T) {
	p := healthy(t)
	p.Hosts = func(context.Context) ([]HostStatus, error) { return nil, errors.New("connection refused") }
	requireOnly(t, Run(context.Background(), p), "host", Fail, "could not ask the running host: connection refused", "restart the browser, which restarts the host")
}

func TestHostProblems(t *testing.T) {
	v := carried
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
			requireOnly(t, Run(context.Background(), p), "host 7", c.level, c.detail, c.fix)
		})
	}
}

func TestProbeFailures(t *testing.T) {
	p := healthy(t)
	p.Keyring = func(context.Context) error { return errors.New("no Secret Service on the bus") }
	requireOnly(t, Run(context.Background(), p), "keyring", Warn, "not usable, so secrets cannot be remembered", "start and unlock a Secret Service (GNOME Keyring or KeePassXC with Secret Service on), e.g. log in to a desktop session")

	// A reason that knows its fix (keychain.Unavailable) gives it.
	p = healthy(t)
	p.Keyring = func(context.Context) error { return lockedKeyring{} }
	requireOnly(t, Run(context.Background(), p), "keyring", Warn, "the OS keyring is locked", "unlock it with Seahorse")

	p = healthy(t)
	p.Policy = func(context.Context) (string, error) {
		return "/home/u/.config/fillgate/policy", errors.New("line 4: unknown key \"allow_al\"")
	}
	requireOnly(t, Run(context.Background(), p), "policy", Fail, `line 4: unknown key "allow_al"`,
		"fillgate policy check /home/u/.config/fillgate/policy (and edit /home/u/.config/fillgate/policy where it says)")

	p = healthy(t)
	p.CDP = func(context.Context) (string, error) { return "127.0.0.1:9222", errors.New("connection refused") }
	requireOnly(t, Run(context.Background(), p), "cdp", Warn, "the configured CDP endpoint 127.0.0.1:9222 cannot be reached: connection refused",
		"start the browser it names with --remote-debugging-port, or remove the endpoint from fillgate's configuration")
}

// lockedKeyring is an error like keychain.Unavailable for a locked keyring.
type lockedKeyring struct{}

func (lockedKeyring) Error() string   { return "the OS keyring is locked: unlock it with Seahorse" }
func (lockedKeyring) FixHint() string { return "unlock it with Seahorse" }

func TestSaysWherePromptsOpen(t *testing.T) {
	port := &HostDrive{Driven: true, Reasons: []string{"the browser was started with --remote-debugging-port", "a debugger is attached to 1 of its pages (DevTools, another extension or a program)"}}
	free := &HostDrive{}
	cases := []struct {
		name   string
		drive  *HostDrive
		prompt string
		level  Level
		detail string
	}{
		{"driven, auto", port, "auto", OK, "chrome (profile Default) can be driven by a program (the browser was started with --remote-debugging-port; " +
			"a debugger is attached to 1 of its pages (DevTools, another extension or a program)); prompts for it open as a native dialog on your desktop, outside the browser"},
		{"driven, the default", port, "", OK, "; prompts for it open as a native dialog on your desktop, outside the browser"},
		{"free, auto", free, "auto", OK, "no program can drive chrome (profile Default) now; prompts for it open in the browser (they move to a native dialog on your desktop while a program can drive it)"},
		{"driven, native", port, "native", OK, `prompts for it open as a native dialog on your desktop, outside the browser (prompt = "native")`},
		{"driven, browser", port, "browser", Warn, `and prompt = "browser" keeps prompts for it in the browser, where that program could read or answer them`},
		{"free, browser", free, "browser", Warn, `with prompt = "browser" they stay there even while a program drives it, where that program could read or answer them`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := healthy(t)
			host := HostStatus{PID: 4242, Version: "0.1.0", Browser: "chrome", Profile: "Default", Connected: true,
				ExtensionVersion: carried, Drive: c.drive, Prompt: c.prompt}
			p.Hosts = func(context.Context) ([]HostStatus, error) { return []HostStatus{host}, nil }
			d := Run(context.Background(), p)
			var got *Check
			for i := range d.Checks {
				if d.Checks[i].Name == "prompts 4242" {
					got = &d.Checks[i]
				}
			}
			if got == nil {
				t.Fatalf("%s: no check for the prompts, want one", d.Text())
			}
			if got.Level != c.level {
				t.Errorf("the check's level = %v, want %v", got.Level, c.level)
			}
			if !strings.Contains(got.Detail, c.detail) {
				t.Errorf("got %q; want it to contain %q", got.Detail, c.detail)
			}
			if c.level == Warn {
				if !strings.Contains(got.Fix, `set prompt = "auto"`) {
					t.Errorf("got %q; want it to contain %q", got.Fix, `set prompt = "auto"`)
				}
				if got := d.ExitCode(); got != 0 {
					t.Errorf("a warning is no failure: exit code %d, want 0", got)
				}
			} else {
				if len(got.Fix) != 0 {
					t.Errorf("fix %q, want none", got.Fix)
				}
			}
		})
	}
}

func TestNoPromptsCheckWithoutADrive(t *testing.T) {
	for _, host := range []HostStatus{
		{PID: 7, Version: "0.1.0", Browser: "chrome", Connected: true, ExtensionVersion: carried}, // an older host
		{PID: 7, Version: "0.1.0", Browser: "chrome", Drive: &HostDrive{Driven: true}},            // not connected
	} {
		p := healthy(t)
		p.Hosts = func(context.Context) ([]HostStatus, error) { return []HostStatus{host}, nil }
		for _, c := range Run(context.Background(), p).Checks {
			if c.Name == "prompts 7" {
				t.Errorf("a check named %q, want none for this host", c.Name)
			}
		}
	}
}

// TestDoctorStoreExtensionVersions: the extension from a store updates on
// its own, so when it and the host differ, doctor says which of the two
// to update.
func TestStoreExtensionVersions(t *testing.T) {
	origins, store := listedInStore()
	v := carried
	cases := []struct {
		ext, host, cli string
		detail, fix    string
	}{
		{"0.9.0", "0.1.0", "0.1.0", `chrome runs extension "0.9.0" from the store with host "0.1.0"`,
			"put the newer release's fillgate where this one is (or go install github.com/fillgate/fillgate@latest), then restart the browser"},
		{"0.9.0", "0.1.0", "0.9.0", `chrome runs extension "0.9.0" from the store with host "0.1.0"`, "restart the browser so it starts this binary"},
		{"0.0.9", "0.1.0", "0.1.0", `chrome runs extension "0.0.9" from the store with host "0.1.0"`,
			"update fillgate's extension: on chrome://extensions turn on Developer mode and click Update (or wait: the store updates it within a few hours)"},
		{"0.0.9", "0.0.9", "0.1.0", `chrome runs host "0.0.9"; this binary is "0.1.0"`, "restart the browser so it starts this binary"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			p := healthy(t)
			p.Version, p.Origins = c.cli, origins
			p.Hosts = func(context.Context) ([]HostStatus, error) {
				return []HostStatus{{PID: 7, Version: c.host, Browser: "chrome", Caller: store, Connected: true, ExtensionVersion: c.ext}}, nil
			}
			d := Run(context.Background(), p)
			var got []Check
			for _, ch := range notOK(d) {
				if ch.Name == "host 7" {
					got = append(got, ch)
				}
			}
			if len(got) != 1 {
				t.Fatalf("%v: got has %d items (%v), want %d", d.Text(), len(got), got, 1)
			}
			if !strings.Contains(got[0].Detail, c.detail) {
				t.Errorf("got %q; want it to contain %q", got[0].Detail, c.detail)
			}
			if got[0].Fix != c.fix {
				t.Errorf("got[0].Fix = %v, want %v", got[0].Fix, c.fix)
			}
		})
	}

	// A store copy in step with the host is fine, whatever the unpacked
	// copy this binary carries says.
	p := healthy(t)
	p.Version, p.Origins = "0.9.0", origins
	p.Hosts = func(context.Context) ([]HostStatus, error) {
		return []HostStatus{{PID: 7, Version: "0.9.0", Browser: "chrome", Caller: store, Connected: true, ExtensionVersion: "0.9.0"}}, nil
	}
	d := Run(context.Background(), p)
	if got := notOK(d); len(got) != 0 {
		t.Errorf("%v: notOK(d) = %v, want it empty", d.Text(), got)
	}
	if v == "0.9.0" {
		t.Errorf("the extension's version is %q, want anything but the old host's 0.9.0", v)
	}
}
