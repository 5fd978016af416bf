package install

import (
	"context"
	"errors"
	"io/fs"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/browsertable"
)

// macOS and Windows paths, system-wide installs and detection, through the
// in-memory filesystem and registry.

func darwinOpts(m *memFS, browsers ...string) Options {
	m.put("/Applications/fillgate/fillgate", "bin", 0o755)
	return Options{
		Browsers: browsers,
		Binary:   "/Applications/fillgate/fillgate",
		Env:      envOf(map[string]string{"HOME": "/Users/u", "PATH": "/usr/bin:/bin"}),
		GOOS:     "darwin",
		FS:       m,
		DataDir:  "/Users/u/Library/Application Support/fillgate",
	}
}

const winBin = `C:\Program Files\fillgate\fillgate.exe`

func windowsOpts(m *memFS, reg *memRegistry, browsers ...string) Options {
	m.put(winBin, "exe", 0o644)
	return Options{
		Browsers: browsers,
		Binary:   winBin,
		Env: envOf(map[string]string{
			"USERPROFILE":  `C:\Users\u`,
			"LOCALAPPDATA": `C:\Users\u\AppData\Local`,
			"APPDATA":      `C:\Users\u\AppData\Roaming`,
			"ProgramData":  `C:\ProgramData`,
		}),
		GOOS:     "windows",
		FS:       m,
		Registry: reg,
		DataDir:  `C:\Users\u\AppData\Local\fillgate`,
	}
}

func manifestPaths(r *Report) []string {
	var ps []string
	for _, m := range r.Manifests {
		ps = append(ps, m.Path)
	}
	sort.Strings(ps)
	return ps
}

func TestInstallEveryMacBrowserGolden(t *testing.T) {
	m := newMemFS()
	r, err := Install(context.Background(), darwinOpts(m, namesFor("darwin")...))
	if err != nil {
		t.Fatal(err)
	}
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "darwin-install.json", js)

	sup := "/Users/u/Library/Application Support/"
	if got, want := manifestPaths(r), []string{
		sup + "Arc/User Data/NativeMessagingHosts/dev.fillgate.host.json",
		sup + "BraveSoftware/Brave-Browser/NativeMessagingHosts/dev.fillgate.host.json",
		sup + "Chromium/NativeMessagingHosts/dev.fillgate.host.json",
		sup + "Google/Chrome Beta/NativeMessagingHosts/dev.fillgate.host.json",
		sup + "Google/Chrome Dev/NativeMessagingHosts/dev.fillgate.host.json",
		sup + "Google/Chrome/NativeMessagingHosts/dev.fillgate.host.json",
		sup + "LibreWolf/NativeMessagingHosts/dev.fillgate.host.json",
		sup + "Microsoft Edge Beta/NativeMessagingHosts/dev.fillgate.host.json",
		sup + "Microsoft Edge Dev/NativeMessagingHosts/dev.fillgate.host.json",
		sup + "Microsoft Edge/NativeMessagingHosts/dev.fillgate.host.json",
		sup + "Mozilla/NativeMessagingHosts/dev.fillgate.host.json",
		sup + "Vivaldi/NativeMessagingHosts/dev.fillgate.host.json",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("manifestPaths(r) = %v, want %v", got, want)
	}
	for _, mf := range r.Manifests {
		switch {
		case strings.Contains(mf.Path, "/Google/Chrome/"):
			if want := []string{"chrome", "opera"}; !reflect.DeepEqual(mf.Browsers, want) {
				t.Errorf("mf.Browsers = %v, want %v", mf.Browsers, want)
			}
		case strings.Contains(mf.Path, "/Mozilla/"):
			if want := []string{"firefox", "waterfox"}; !reflect.DeepEqual(mf.Browsers, want) {
				t.Errorf("mf.Browsers = %v, want %v", mf.Browsers, want)
			}
		}
		b, err := m.ReadFile(mf.Path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(mf.Path, "Mozilla") || strings.Contains(mf.Path, "LibreWolf") {
			if got := string(b); !strings.Contains(got, `"allowed_extensions"`) {
				t.Errorf("got %q; want it to contain %q", got, `"allowed_extensions"`)
			}
		} else {
			if got := string(b); !strings.Contains(got, `"allowed_origins"`) {
				t.Errorf("got %q; want it to contain %q", got, `"allowed_origins"`)
			}
		}
		if got := string(b); !strings.Contains(got, `"path": "/Applications/fillgate/fillgate"`) {
			t.Errorf("got %q; want it to contain %q", got, `"path": "/Applications/fillgate/fillgate"`)
		}
	}
	if got := m.files(); !slices.Contains(got, "/Users/u/Library/Application Support/fillgate/extension/manifest.json") {
		t.Errorf("files written %q; want them to hold %q", got, "/Users/u/Library/Application Support/fillgate/extension/manifest.json")
	}
}

func TestInstallMacSystemWide(t *testing.T) {
	m := newMemFS()
	o := darwinOpts(m, namesFor("darwin")...)
	o.System = true
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scope != ScopeSystem {
		t.Errorf("r.Scope = %v, want %v", r.Scope, ScopeSystem)
	}
	if got, want := manifestPaths(r), []string{
		"/Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Application Support/Chromium/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Application Support/LibreWolf/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Application Support/Mozilla/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Application Support/Vivaldi/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Google/Chrome/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Microsoft/Edge/NativeMessagingHosts/dev.fillgate.host.json",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("manifestPaths(r) = %v, want %v", got, want)
	}
	if len(r.Skipped) != 1 {
		t.Fatalf("r.Skipped has %d items (%v), want %d", len(r.Skipped), r.Skipped, 1)
	}
	if r.Skipped[0].Browser != "arc" {
		t.Errorf("r.Skipped[0].Browser = %q, want %q", r.Skipped[0].Browser, "arc")
	}
	if !strings.Contains(r.Skipped[0].Reason, "Arc reads no system-wide folder") {
		t.Errorf("got %q; want it to contain %q", r.Skipped[0].Reason, "Arc reads no system-wide folder")
	}
	if r.ExtensionDir != "/Library/Application Support/fillgate/extension" {
		t.Errorf("r.ExtensionDir = %q, want %q", r.ExtensionDir, "/Library/Application Support/fillgate/extension")
	}
	fi, err := m.Stat("/Library/Application Support/fillgate/extension")
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().String(); got != "drwxr-xr-x" {
		t.Errorf("every user can load a system-wide extension: got %q, want %q", got, "drwxr-xr-x")
	}
	// The binary is world-executable: no note about it is needed.
	for _, n := range r.Notes {
		if strings.Contains(n, "other users cannot run") {
			t.Errorf("the binary is world-executable, yet a note says %q", n)
		}
	}
}

func TestInstallEveryWindowsBrowserGolden(t *testing.T) {
	m, reg := newMemFS(), newMemRegistry()
	r, err := Install(context.Background(), windowsOpts(m, reg, namesFor("windows")...))
	if err != nil {
		t.Fatal(err)
	}
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "windows-install.json", js)

	chromium := `C:\Users\u\AppData\Local\fillgate\NativeMessagingHosts\chromium\dev.fillgate.host.json`
	firefox := `C:\Users\u\AppData\Local\fillgate\NativeMessagingHosts\firefox\dev.fillgate.host.json`
	if got, want := manifestPaths(r), []string{chromium, firefox}; !reflect.DeepEqual(got, want) {
		t.Errorf("manifestPaths(r) = %v, want %v", got, want)
	}
	if got, want := reg.snapshot(), map[string]string{
		`HKCU\Software\Google\Chrome\NativeMessagingHosts\dev.fillgate.host`:               chromium,
		`HKCU\Software\Chromium\NativeMessagingHosts\dev.fillgate.host`:                    chromium,
		`HKCU\Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\dev.fillgate.host`: chromium,
		`HKCU\Software\Microsoft\Edge\NativeMessagingHosts\dev.fillgate.host`:              chromium,
		`HKCU\Software\Vivaldi\NativeMessagingHosts\dev.fillgate.host`:                     chromium,
		`HKCU\Software\Mozilla\NativeMessagingHosts\dev.fillgate.host`:                     firefox,
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("reg.snapshot() = %v, want %v", got, want)
	}
	b, err := m.ReadFile(chromium)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.Contains(got, `"path": "C:\\Program Files\\fillgate\\fillgate.exe"`) {
		t.Errorf("got %q; want it to contain %q", got, `"path": "C:\\Program Files\\fillgate\\fillgate.exe"`)
	}
	if got := string(b); !strings.Contains(got, `"allowed_origins"`) {
		t.Errorf("got %q; want it to contain %q", got, `"allowed_origins"`)
	}
	b, err = m.ReadFile(firefox)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.Contains(got, `"allowed_extensions"`) {
		t.Errorf("got %q; want it to contain %q", got, `"allowed_extensions"`)
	}

	// Again: nothing changes.
	r, err = Install(context.Background(), windowsOpts(m, reg, namesFor("windows")...))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range r.Registry {
		if k.Status != Unchanged {
			t.Errorf("%v: got %v, want %v", k.Key, k.Status, Unchanged)
		}
	}

	// Uninstall removes every key and file it wrote.
	r, err = Uninstall(context.Background(), windowsOpts(m, reg))
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.snapshot(); len(got) != 0 {
		t.Errorf("reg.snapshot() = %v, want it empty", got)
	}
	if got, want := reg.all(), []string{`HKCU\Software`}; !reflect.DeepEqual(got, want) {
		t.Errorf("uninstall leaves no key install created, parents included: got %v, want %v", got, want)
	}
	if len(r.Registry) != 6 {
		t.Errorf("r.Registry has %d items (%v), want %d", len(r.Registry), r.Registry, 6)
	}
	if got, want := m.files(), []string{memKey(winBin)}; !reflect.DeepEqual(got, want) {
		t.Errorf("m.files() = %v, want %v", got, want)
	}
}

// TestUninstallWindowsKeepsParentsItDidNotMake: the keys above fillgate's
// that existed before install stay, and so does one install made but
// something else has used since; the rest go.
func TestUninstallWindowsKeepsParentsItDidNotMake(t *testing.T) {
	m, reg := newMemFS(), newMemRegistry()
	// Chrome is installed (its key holds a value); Edge is not.
	if err := reg.SetDefault(HKCU, `Software\Google\Chrome`, "chrome"); err != nil {
		t.Fatal(err)
	}
	_, err := Install(context.Background(), windowsOpts(m, reg, "chrome", "edge", "firefox"))
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.all(); !slices.Contains(got, `HKCU\Software\Microsoft\Edge\NativeMessagingHosts`) {
		t.Errorf("registry keys %q; want them to hold %q", got, `HKCU\Software\Microsoft\Edge\NativeMessagingHosts`)
	}
	// Another program's host appears under Firefox's parent meanwhile.
	if err := reg.SetDefault(HKCU, `Software\Mozilla\NativeMessagingHosts\other.host`, `C:\other.json`); err != nil {
		t.Fatal(err)
	}

	_, err = Uninstall(context.Background(), windowsOpts(m, reg))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reg.all(), []string{
		`HKCU\Software`,
		`HKCU\Software\Google`,
		`HKCU\Software\Google\Chrome`,
		`HKCU\Software\Mozilla`,
		`HKCU\Software\Mozilla\NativeMessagingHosts`,
		`HKCU\Software\Mozilla\NativeMessagingHosts\other.host`,
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("reg.all() = %v, want %v", got, want)
	}
	rec, err := m.ReadFile(`C:\Users\u\AppData\Local\fillgate\install.json`)
	if err != nil {
		t.Fatalf("the record keeps the parent key it could not delete yet: %v", err)
	}
	if got := string(rec); !strings.Contains(got, `"key": "Software\\Mozilla\\NativeMessagingHosts"`) {
		t.Errorf("got %q; want it to contain %q", got, `"key": "Software\\Mozilla\\NativeMessagingHosts"`)
	}
	if got := string(rec); strings.Contains(got, `Edge`) {
		t.Errorf("got %q; want it not to contain %q", got, `Edge`)
	}

	// Once the other host is gone, the next uninstall takes the rest.
	if err := reg.DeleteKey(HKCU, `Software\Mozilla\NativeMessagingHosts\other.host`); err != nil {
		t.Fatal(err)
	}
	_, err = Uninstall(context.Background(), windowsOpts(m, reg))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reg.all(), []string{`HKCU\Software`, `HKCU\Software\Google`, `HKCU\Software\Google\Chrome`}; !reflect.DeepEqual(got, want) {
		t.Errorf("reg.all() = %v, want %v", got, want)
	}
	if got, want := m.files(), []string{memKey(winBin)}; !reflect.DeepEqual(got, want) {
		t.Errorf("m.files() = %v, want %v", got, want)
	}
}

func TestInstallWindowsSystemWideUsesHKLM(t *testing.T) {
	m, reg := newMemFS(), newMemRegistry()
	o := windowsOpts(m, reg, "chrome", "firefox")
	o.System = true
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reg.snapshot(), map[string]string{
		`HKLM\Software\Google\Chrome\NativeMessagingHosts\dev.fillgate.host`: `C:\ProgramData\fillgate\NativeMessagingHosts\chromium\dev.fillgate.host.json`,
		`HKLM\Software\Mozilla\NativeMessagingHosts\dev.fillgate.host`:       `C:\ProgramData\fillgate\NativeMessagingHosts\firefox\dev.fillgate.host.json`,
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("reg.snapshot() = %v, want %v", got, want)
	}
	if r.ExtensionDir != `C:\ProgramData\fillgate\extension` {
		t.Errorf("r.ExtensionDir = %q, want %q", r.ExtensionDir, `C:\ProgramData\fillgate\extension`)
	}
}

func TestInstallWindowsLeavesAForeignKey(t *testing.T) {
	m, reg := newMemFS(), newMemRegistry()
	key := `Software\Google\Chrome\NativeMessagingHosts\dev.fillgate.host`
	if err := reg.SetDefault(HKCU, key, `D:\other\host.json`); err != nil {
		t.Fatal(err)
	}
	r, err := Install(context.Background(), windowsOpts(m, reg, "chrome", "edge"))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("error %v; want %v", err, ErrConflict)
	}
	v, _, _ := reg.Default(HKCU, key)
	if v != `D:\other\host.json` {
		t.Errorf("v = %q, want %q", v, `D:\other\host.json`)
	}
	var st []Status
	for _, k := range r.Registry {
		st = append(st, k.Status)
	}
	if want := []Status{Conflict, Created}; !reflect.DeepEqual(st, want) {
		t.Errorf("registry statuses %v, want %v", st, want)
	}
	if !strings.Contains(r.Registry[0].Detail, `points at D:\other\host.json, not a manifest fillgate wrote`) {
		t.Errorf("got %q; want it to contain %q", r.Registry[0].Detail, `points at D:\other\host.json, not a manifest fillgate wrote`)
	}

	// Uninstall leaves it too.
	r, err = Uninstall(context.Background(), windowsOpts(m, reg))
	if err != nil {
		t.Fatal(err)
	}
	v, ok, _ := reg.Default(HKCU, key)
	if !ok {
		t.Errorf("the other host's registry key is gone after uninstall, want it kept")
	}
	if v != `D:\other\host.json` {
		t.Errorf("v = %q, want %q", v, `D:\other\host.json`)
	}
	o := windowsOpts(m, reg, "chrome")
	o.Force = true
	_, err = Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ = reg.Default(HKCU, key)
	if v != `C:\Users\u\AppData\Local\fillgate\NativeMessagingHosts\chromium\dev.fillgate.host.json` {
		t.Errorf("v = %q, want %q", v, `C:\Users\u\AppData\Local\fillgate\NativeMessagingHosts\chromium\dev.fillgate.host.json`)
	}
}

func TestWindowsRejectsUserDataDir(t *testing.T) {
	o := windowsOpts(newMemFS(), newMemRegistry())
	o.UserDataDir = `C:\profile`
	_, err := Install(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "--user-data-dir does not apply on Windows") {
		t.Errorf("Install(context.Background(), o): error %v; want one containing %q", err, "--user-data-dir does not apply on Windows")
	}
}

func TestWindowsNeedsARegistry(t *testing.T) {
	o := windowsOpts(newMemFS(), nil)
	o.Registry = nil
	if defaultRegistry() != nil {
		t.Skip("running on Windows: the real registry is the default")
	}
	_, err := Install(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "no Windows registry here") {
		t.Errorf("Install(context.Background(), o): error %v; want one containing %q", err, "no Windows registry here")
	}
}

func linuxMem(m *memFS, browsers ...string) Options {
	m.put("/usr/local/bin/fillgate", "bin", 0o755)
	return Options{
		Browsers: browsers,
		Binary:   "/usr/local/bin/fillgate",
		Env:      envOf(map[string]string{"HOME": "/home/u", "PATH": "/usr/local/bin:/usr/bin:/snap/bin"}),
		GOOS:     "linux",
		FS:       m,
		DataDir:  "/home/u/.local/share/fillgate",
	}
}

func TestInstallLinuxSystemWide(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, namesFor("linux")...)
	o.System = true
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := manifestPaths(r), []string{
		"/etc/chromium/native-messaging-hosts/dev.fillgate.host.json",
		"/etc/opt/chrome/native-messaging-hosts/dev.fillgate.host.json",
		"/etc/opt/edge/native-messaging-hosts/dev.fillgate.host.json",
		"/usr/lib/librewolf/native-messaging-hosts/dev.fillgate.host.json",
		"/usr/lib/mozilla/native-messaging-hosts/dev.fillgate.host.json",
		"/usr/lib/waterfox/native-messaging-hosts/dev.fillgate.host.json",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("/usr/lib64/mozilla/native-messaging-hosts only where /usr/lib64/mozilla exists: got %v, want %v", got, want)
	}
	for _, mf := range r.Manifests {
		if strings.HasPrefix(mf.Path, "/etc/opt/chrome/") {
			if want := []string{"chrome", "chrome-beta", "chrome-dev", "brave", "vivaldi", "opera"}; !reflect.DeepEqual(mf.Browsers, want) {
				t.Errorf("mf.Browsers = %v, want %v", mf.Browsers, want)
			}
		}
	}
	if r.ExtensionDir != "/usr/local/share/fillgate/extension" {
		t.Errorf("r.ExtensionDir = %q, want %q", r.ExtensionDir, "/usr/local/share/fillgate/extension")
	}

	if err := m.MkdirAll("/usr/lib64/mozilla", 0o755); err != nil {
		t.Fatal(err)
	} // as Fedora's mozilla-filesystem has it
	r, err = Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := manifestPaths(r); !slices.Contains(got, "/usr/lib64/mozilla/native-messaging-hosts/dev.fillgate.host.json") {
		t.Errorf("manifests %q; want them to hold %q", got, "/usr/lib64/mozilla/native-messaging-hosts/dev.fillgate.host.json")
	}
}

func TestInstallSystemWarnsAboutAPrivateBinary(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "chromium")
	m.put("/home/u/bin/fillgate", "bin", 0o700)
	o.Binary = "/home/u/bin/fillgate"
	o.System = true
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Notes, "\n"); !strings.Contains(got, "other users cannot run /home/u/bin/fillgate") {
		t.Errorf("got %q; want it to contain %q", got, "other users cannot run /home/u/bin/fillgate")
	}
}

func TestInstallWarnsAboutGoRunBinaries(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "chromium")
	m.put("/tmp/go-build123/b001/exe/fillgate", "bin", 0o755)
	o.Binary = "/tmp/go-build123/b001/exe/fillgate"
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Notes, "\n"); !strings.Contains(got, "temporary build folder") {
		t.Errorf("got %q; want it to contain %q", got, "temporary build folder")
	}
}

func TestDetectFindsBrowsersByProfileProgramOrCommand(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m)
	m.put("/home/u/.config/google-chrome/Local State", "{}", 0o600) // profile
	m.put("/opt/microsoft/msedge/msedge", "", 0o755)                // program
	m.put("/usr/bin/firefox", "", 0o755)                            // command on $PATH
	m.put("/usr/sbin/vivaldi", "", 0o755)                           // not on $PATH
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Found{
		{Browser: "chrome", Evidence: "/home/u/.config/google-chrome/Local State"},
		{Browser: "edge", Evidence: "/opt/microsoft/msedge/msedge"},
		{Browser: "firefox", Evidence: "/usr/bin/firefox"},
	}; !reflect.DeepEqual(r.Found, want) {
		t.Errorf("r.Found = %v, want %v", r.Found, want)
	}
	var skipped []string
	for _, s := range r.Skipped {
		skipped = append(skipped, s.Browser)
	}
	if want := []string{"chrome-beta", "chrome-dev", "chromium", "brave", "edge-beta", "edge-dev", "vivaldi", "opera", "librewolf", "waterfox"}; !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped = %v, want %v", skipped, want)
	}
	if len(r.Manifests) != 3 {
		t.Errorf("r.Manifests has %d items (%v), want %d", len(r.Manifests), r.Manifests, 3)
	}
	txt := r.Text()
	if !strings.Contains(txt, "Found:\n  chrome       ~/.config/google-chrome/Local State\n") {
		t.Errorf("got %q; want it to contain %q", txt, "Found:\n  chrome       ~/.config/google-chrome/Local State\n")
	}
	if !strings.Contains(txt, "Skipped:\n  chrome-beta  not found (looked for ~/.config/google-chrome-beta/Local State, /opt/google/chrome-beta/chrome, google-chrome-beta on $PATH)") {
		t.Errorf("got %q; want it to contain %q", txt, "Skipped:\n  chrome-beta  not found (looked for ~/.config/google-chrome-beta/Local State, /opt/google/chrome-beta/chrome, google-chrome-beta on $PATH)")
	}
}

func TestOurOwnOperaFolderDoesNotMakeChromeFound(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "opera")
	_, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.Browsers = nil
	r, err := Install(context.Background(), o)
	if !errors.Is(err, ErrNoBrowser) {
		t.Fatalf("~/.config/google-chrome now exists, but holds no Chrome profile: error %v; want %v", err, ErrNoBrowser)
	}
	if len(r.Found) != 0 {
		t.Errorf("r.Found = %v, want it empty", r.Found)
	}
}

func TestSandboxedChromiumGetsNoManifest(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m)
	m.put("/snap/bin/chromium", "", 0o755)                   // the Chromium Snap, on $PATH
	m.put("/home/u/.var/app/com.google.Chrome/x", "", 0o644) // the Chrome Flatpak
	m.put("/usr/bin/firefox", "", 0o755)
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := manifestPaths(r), []string{"/home/u/.mozilla/native-messaging-hosts/dev.fillgate.host.json"}; !reflect.DeepEqual(got, want) {
		t.Errorf("manifestPaths(r) = %v, want %v", got, want)
	}

	reasons := map[string]string{}
	for _, s := range r.Skipped {
		reasons[s.Browser] = s.Reason
	}
	if reasons["chromium"] != "only a sandboxed snap install was found (see below)" {
		t.Errorf("reasons[\"chromium\"] = %q, want %q", reasons["chromium"], "only a sandboxed snap install was found (see below)")
	}
	if reasons["chrome"] != "only a sandboxed flatpak install was found (see below)" {
		t.Errorf("reasons[\"chrome\"] = %q, want %q", reasons["chrome"], "only a sandboxed flatpak install was found (see below)")
	}
	if len(r.Sandboxed) != 2 {
		t.Fatalf("r.Sandboxed has %d items (%v), want %d", len(r.Sandboxed), r.Sandboxed, 2)
	}
	for _, s := range r.Sandboxed {
		if s.Works {
			t.Errorf("%v: s.Works: got true, want false", s.Browser)
		}
		if !strings.Contains(s.Detail, "fillgate writes none") {
			t.Errorf("got %q; want it to contain %q", s.Detail, "fillgate writes none")
		}
		if !strings.Contains(s.Detail, "vendor's .deb or .rpm") {
			t.Errorf("got %q; want it to contain %q", s.Detail, "vendor's .deb or .rpm")
		}
	}
	if !strings.Contains(r.Sandboxed[0].Detail, "Google Chrome is a Flatpak (com.google.Chrome)") {
		t.Errorf("got %q; want it to contain %q", r.Sandboxed[0].Detail, "Google Chrome is a Flatpak (com.google.Chrome)")
	}
	if !strings.Contains(r.Sandboxed[1].Detail, "Chromium is a Snap") {
		t.Errorf("got %q; want it to contain %q", r.Sandboxed[1].Detail, "Chromium is a Snap")
	}
	if got := strings.Join(m.files(), "\n"); strings.Contains(got, ".var/app/com.google.Chrome/config") {
		t.Errorf("nothing written inside the sandbox: got %q; want it not to contain %q", got, ".var/app/com.google.Chrome/config")
	}
	if got := r.Text(); !strings.Contains(got, "Sandboxed browsers:") {
		t.Errorf("got %q; want it to contain %q", got, "Sandboxed browsers:")
	}
}

func TestSandboxedFirefoxUsesTheHostManifest(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m)
	m.put("/snap/bin/firefox", "", 0o755)
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := manifestPaths(r), []string{"/home/u/.mozilla/native-messaging-hosts/dev.fillgate.host.json"}; !reflect.DeepEqual(got, want) {
		t.Errorf("manifestPaths(r) = %v, want %v", got, want)
	}
	if len(r.Sandboxed) != 1 {
		t.Fatalf("r.Sandboxed has %d items (%v), want %d", len(r.Sandboxed), r.Sandboxed, 1)
	}
	if !r.Sandboxed[0].Works {
		t.Errorf("r.Sandboxed[0].Works: got false, want true")
	}
	if !strings.Contains(r.Sandboxed[0].Detail, "WebExtensions portal") {
		t.Errorf("got %q; want it to contain %q", r.Sandboxed[0].Detail, "WebExtensions portal")
	}

	m = newMemFS()
	o = linuxMem(m)
	m.put("/var/lib/flatpak/app/org.mozilla.firefox/current", "", 0o644)
	r, err = Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := manifestPaths(r), []string{"/home/u/.mozilla/native-messaging-hosts/dev.fillgate.host.json"}; !reflect.DeepEqual(got, want) {
		t.Errorf("manifestPaths(r) = %v, want %v", got, want)
	}
	if len(r.Sandboxed) != 1 {
		t.Fatalf("r.Sandboxed has %d items (%v), want %d", len(r.Sandboxed), r.Sandboxed, 1)
	}
	for _, want := range []string{"xdg-native-messaging-proxy", "Firefox 157",
		"flatpak override --user --talk-name=org.freedesktop.NativeMessagingProxy org.mozilla.firefox",
		"widget.use-xdg-desktop-portal.native-messaging-proxy"} {
		if !strings.Contains(r.Sandboxed[0].Detail, want) {
			t.Errorf("got %q; want it to contain %q", r.Sandboxed[0].Detail, want)
		}
	}
	if r.Sandboxed[0].Fix != "install xdg-native-messaging-proxy; systemctl --user enable --now xdg-native-messaging-proxy.service; "+
		"flatpak override --user --talk-name=org.freedesktop.NativeMessagingProxy org.mozilla.firefox; "+
		"in about:config set widget.use-xdg-desktop-portal.native-messaging-proxy to 1" {
		t.Errorf("r.Sandboxed[0].Fix = %q, want %q", r.Sandboxed[0].Fix, "install xdg-native-messaging-proxy; systemctl --user enable --now xdg-native-messaging-proxy.service; "+
			"flatpak override --user --talk-name=org.freedesktop.NativeMessagingProxy org.mozilla.firefox; "+
			"in about:config set widget.use-xdg-desktop-portal.native-messaging-proxy to 1")
	}
}

func TestDamagedRecordIsReported(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "chromium")
	m.put("/home/u/.local/share/fillgate/install.json", "{not json", 0o600)
	_, err := Install(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "the install record /home/u/.local/share/fillgate/install.json is damaged") {
		t.Errorf("Install(context.Background(), o): error %v; want one containing %q", err, "the install record /home/u/.local/share/fillgate/install.json is damaged")
	}
}

func TestOSPath(t *testing.T) {
	w := browsertable.Path("windows")
	if got := w.Join(`C:\a`, `b/c.json`); got != `C:\a\b\c.json` {
		t.Errorf("w.Join(`C:\\a`, `b/c.json`) = %q, want %q", got, `C:\a\b\c.json`)
	}
	if got := w.Join(`C:\a\`, ""); got != `C:\a` {
		t.Errorf("w.Join(`C:\\a\\`, \"\") = %q, want %q", got, `C:\a`)
	}
	if got := w.Join(`\\srv\share`, "x"); got != `\\srv\share\x` {
		t.Errorf("w.Join(`\\\\srv\\share`, \"x\") = %q, want %q", got, `\\srv\share\x`)
	}
	if got := w.Dir(`C:\a\b`); got != `C:\a` {
		t.Errorf("w.Dir(`C:\\a\\b`) = %q, want %q", got, `C:\a`)
	}
	if got := w.Dir(`C:\a`); got != `C:\` {
		t.Errorf("w.Dir(`C:\\a`) = %q, want %q", got, `C:\`)
	}
	if !w.IsAbs(`C:\x`) {
		t.Errorf("w.IsAbs(`C:\\x`): got false, want true")
	}
	if !w.IsAbs(`\\srv\share`) {
		t.Errorf("w.IsAbs(`\\\\srv\\share`): got false, want true")
	}
	if w.IsAbs(`x\y`) {
		t.Errorf("w.IsAbs(`x\\y`): got true, want false")
	}
	if w.IsAbs(`/x`) {
		t.Errorf("w.IsAbs(`/x`): got true, want false")
	}
	u := browsertable.Path("linux")
	if got := u.Join("/a", "b"); got != "/a/b" {
		t.Errorf("u.Join(\"/a\", \"b\") = %q, want %q", got, "/a/b")
	}
	if !u.IsAbs("/x") {
		t.Errorf("u.IsAbs(\"/x\"): got false, want true")
	}
	if u.IsAbs(`C:\x`) {
		t.Errorf("u.IsAbs(`C:\\x`): got true, want false")
	}
}

func TestSystemInstallRefusesAReplaceableBinary(t *testing.T) {
	for _, c := range []struct {
		path string
		mode fs.FileMode
	}{{"/home/u/bin/fillgate", 0o777}, {"/tmp/fillgate", 0o755}} {
		m := newMemFS()
		o := linuxMem(m, "chromium")
		m.put(c.path, "bin", c.mode)
		if c.path == "/tmp/fillgate" {
			m.nodes["/tmp"].mode = fs.ModeDir | fs.ModeSticky | 0o777
		}
		o.Binary, o.System = c.path, true
		_, err := Install(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), "only root can change") {
			t.Errorf("%v: error %v; want one containing %q", c.path, err, "only root can change")
		}
		for _, f := range m.files() {
			if strings.HasPrefix(f, "/etc/") {
				t.Errorf("%s written for %s", f, c.path)
			}
		}
	}
}
