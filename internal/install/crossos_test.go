package install

import (
	"context"
	"io/fs"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	js, err := r.JSON()
	require.NoError(t, err)
	golden(t, "darwin-install.json", js)

	sup := "/Users/u/Library/Application Support/"
	assert.Equal(t, []string{
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
	}, manifestPaths(r))
	for _, mf := range r.Manifests {
		switch {
		case strings.Contains(mf.Path, "/Google/Chrome/"):
			assert.Equal(t, []string{"chrome", "opera"}, mf.Browsers)
		case strings.Contains(mf.Path, "/Mozilla/"):
			assert.Equal(t, []string{"firefox", "waterfox"}, mf.Browsers)
		}
		b, err := m.ReadFile(mf.Path)
		require.NoError(t, err)
		if strings.Contains(mf.Path, "Mozilla") || strings.Contains(mf.Path, "LibreWolf") {
			assert.Contains(t, string(b), `"allowed_extensions"`)
		} else {
			assert.Contains(t, string(b), `"allowed_origins"`)
		}
		assert.Contains(t, string(b), `"path": "/Applications/fillgate/fillgate"`)
	}
	assert.Contains(t, m.files(), "/Users/u/Library/Application Support/fillgate/extension/manifest.json")
}

func TestInstallMacSystemWide(t *testing.T) {
	m := newMemFS()
	o := darwinOpts(m, namesFor("darwin")...)
	o.System = true
	r, err := Install(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, ScopeSystem, r.Scope)
	assert.Equal(t, []string{
		"/Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Application Support/Chromium/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Application Support/LibreWolf/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Application Support/Mozilla/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Application Support/Vivaldi/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Google/Chrome/NativeMessagingHosts/dev.fillgate.host.json",
		"/Library/Microsoft/Edge/NativeMessagingHosts/dev.fillgate.host.json",
	}, manifestPaths(r))
	require.Len(t, r.Skipped, 1)
	assert.Equal(t, "arc", r.Skipped[0].Browser)
	assert.Contains(t, r.Skipped[0].Reason, "Arc reads no system-wide folder")
	assert.Equal(t, "/Library/Application Support/fillgate/extension", r.ExtensionDir)
	fi, err := m.Stat("/Library/Application Support/fillgate/extension")
	require.NoError(t, err)
	assert.Equal(t, "drwxr-xr-x", fi.Mode().String(), "every user can load a system-wide extension")
	assert.Contains(t, strings.Join(r.Notes, "\n"), "", "binary is world-executable: no note needed")
	for _, n := range r.Notes {
		assert.NotContains(t, n, "other users cannot run")
	}
}

func TestInstallEveryWindowsBrowserGolden(t *testing.T) {
	m, reg := newMemFS(), newMemRegistry()
	r, err := Install(context.Background(), windowsOpts(m, reg, namesFor("windows")...))
	require.NoError(t, err)
	js, err := r.JSON()
	require.NoError(t, err)
	golden(t, "windows-install.json", js)

	chromium := `C:\Users\u\AppData\Local\fillgate\NativeMessagingHosts\chromium\dev.fillgate.host.json`
	firefox := `C:\Users\u\AppData\Local\fillgate\NativeMessagingHosts\firefox\dev.fillgate.host.json`
	assert.Equal(t, []string{chromium, firefox}, manifestPaths(r))
	assert.Equal(t, map[string]string{
		`HKCU\Software\Google\Chrome\NativeMessagingHosts\dev.fillgate.host`:               chromium,
		`HKCU\Software\Chromium\NativeMessagingHosts\dev.fillgate.host`:                    chromium,
		`HKCU\Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\dev.fillgate.host`: chromium,
		`HKCU\Software\Microsoft\Edge\NativeMessagingHosts\dev.fillgate.host`:              chromium,
		`HKCU\Software\Vivaldi\NativeMessagingHosts\dev.fillgate.host`:                     chromium,
		`HKCU\Software\Mozilla\NativeMessagingHosts\dev.fillgate.host`:                     firefox,
	}, reg.snapshot())
	b, err := m.ReadFile(chromium)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"path": "C:\\Program Files\\fillgate\\fillgate.exe"`)
	assert.Contains(t, string(b), `"allowed_origins"`)
	b, err = m.ReadFile(firefox)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"allowed_extensions"`)

	// Again: nothing changes.
	r, err = Install(context.Background(), windowsOpts(m, reg, namesFor("windows")...))
	require.NoError(t, err)
	for _, k := range r.Registry {
		assert.Equal(t, Unchanged, k.Status, k.Key)
	}

	// Uninstall removes every key and file it wrote.
	r, err = Uninstall(context.Background(), windowsOpts(m, reg))
	require.NoError(t, err)
	assert.Empty(t, reg.snapshot())
	assert.Equal(t, []string{`HKCU\Software`}, reg.all(), "uninstall leaves no key install created, parents included")
	assert.Len(t, r.Registry, 6)
	assert.Equal(t, []string{memKey(winBin)}, m.files())
}

// TestUninstallWindowsKeepsParentsItDidNotMake: the keys above fillgate's
// that existed before install stay, and so does one install made but
// something else has used since; the rest go.
func TestUninstallWindowsKeepsParentsItDidNotMake(t *testing.T) {
	m, reg := newMemFS(), newMemRegistry()
	// Chrome is installed (its key holds a value); Edge is not.
	require.NoError(t, reg.SetDefault(HKCU, `Software\Google\Chrome`, "chrome"))
	_, err := Install(context.Background(), windowsOpts(m, reg, "chrome", "edge", "firefox"))
	require.NoError(t, err)
	assert.Contains(t, reg.all(), `HKCU\Software\Microsoft\Edge\NativeMessagingHosts`)
	// Another program's host appears under Firefox's parent meanwhile.
	require.NoError(t, reg.SetDefault(HKCU, `Software\Mozilla\NativeMessagingHosts\other.host`, `C:\other.json`))

	_, err = Uninstall(context.Background(), windowsOpts(m, reg))
	require.NoError(t, err)
	assert.Equal(t, []string{
		`HKCU\Software`,
		`HKCU\Software\Google`,
		`HKCU\Software\Google\Chrome`,
		`HKCU\Software\Mozilla`,
		`HKCU\Software\Mozilla\NativeMessagingHosts`,
		`HKCU\Software\Mozilla\NativeMessagingHosts\other.host`,
	}, reg.all())
	rec, err := m.ReadFile(`C:\Users\u\AppData\Local\fillgate\install.json`)
	require.NoError(t, err, "the record keeps the parent key it could not delete yet")
	assert.Contains(t, string(rec), `"key": "Software\\Mozilla\\NativeMessagingHosts"`)
	assert.NotContains(t, string(rec), `Edge`)

	// Once the other host is gone, the next uninstall takes the rest.
	require.NoError(t, reg.DeleteKey(HKCU, `Software\Mozilla\NativeMessagingHosts\other.host`))
	_, err = Uninstall(context.Background(), windowsOpts(m, reg))
	require.NoError(t, err)
	assert.Equal(t, []string{`HKCU\Software`, `HKCU\Software\Google`, `HKCU\Software\Google\Chrome`}, reg.all())
	assert.Equal(t, []string{memKey(winBin)}, m.files())
}

func TestInstallWindowsSystemWideUsesHKLM(t *testing.T) {
	m, reg := newMemFS(), newMemRegistry()
	o := windowsOpts(m, reg, "chrome", "firefox")
	o.System = true
	r, err := Install(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		`HKLM\Software\Google\Chrome\NativeMessagingHosts\dev.fillgate.host`: `C:\ProgramData\fillgate\NativeMessagingHosts\chromium\dev.fillgate.host.json`,
		`HKLM\Software\Mozilla\NativeMessagingHosts\dev.fillgate.host`:       `C:\ProgramData\fillgate\NativeMessagingHosts\firefox\dev.fillgate.host.json`,
	}, reg.snapshot())
	assert.Equal(t, `C:\ProgramData\fillgate\extension`, r.ExtensionDir)
}

func TestInstallWindowsLeavesAForeignKey(t *testing.T) {
	m, reg := newMemFS(), newMemRegistry()
	key := `Software\Google\Chrome\NativeMessagingHosts\dev.fillgate.host`
	require.NoError(t, reg.SetDefault(HKCU, key, `D:\other\host.json`))
	r, err := Install(context.Background(), windowsOpts(m, reg, "chrome", "edge"))
	require.ErrorIs(t, err, ErrConflict)
	v, _, _ := reg.Default(HKCU, key)
	assert.Equal(t, `D:\other\host.json`, v)
	var st []Status
	for _, k := range r.Registry {
		st = append(st, k.Status)
	}
	assert.Equal(t, []Status{Conflict, Created}, st)
	assert.Contains(t, r.Registry[0].Detail, `points at D:\other\host.json, not a manifest fillgate wrote`)

	// Uninstall leaves it too.
	r, err = Uninstall(context.Background(), windowsOpts(m, reg))
	require.NoError(t, err)
	v, ok, _ := reg.Default(HKCU, key)
	assert.True(t, ok)
	assert.Equal(t, `D:\other\host.json`, v)
	o := windowsOpts(m, reg, "chrome")
	o.Force = true
	_, err = Install(context.Background(), o)
	require.NoError(t, err)
	v, _, _ = reg.Default(HKCU, key)
	assert.Equal(t, `C:\Users\u\AppData\Local\fillgate\NativeMessagingHosts\chromium\dev.fillgate.host.json`, v)
}

func TestWindowsRejectsUserDataDir(t *testing.T) {
	o := windowsOpts(newMemFS(), newMemRegistry())
	o.UserDataDir = `C:\profile`
	_, err := Install(context.Background(), o)
	assert.ErrorContains(t, err, "--user-data-dir does not apply on Windows")
}

func TestWindowsNeedsARegistry(t *testing.T) {
	o := windowsOpts(newMemFS(), nil)
	o.Registry = nil
	if defaultRegistry() != nil {
		t.Skip("running on Windows: the real registry is the default")
	}
	_, err := Install(context.Background(), o)
	assert.ErrorContains(t, err, "no Windows registry here")
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
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/etc/chromium/native-messaging-hosts/dev.fillgate.host.json",
		"/etc/opt/chrome/native-messaging-hosts/dev.fillgate.host.json",
		"/etc/opt/edge/native-messaging-hosts/dev.fillgate.host.json",
		"/usr/lib/librewolf/native-messaging-hosts/dev.fillgate.host.json",
		"/usr/lib/mozilla/native-messaging-hosts/dev.fillgate.host.json",
		"/usr/lib/waterfox/native-messaging-hosts/dev.fillgate.host.json",
	}, manifestPaths(r), "/usr/lib64/mozilla/native-messaging-hosts only where /usr/lib64/mozilla exists")
	for _, mf := range r.Manifests {
		if strings.HasPrefix(mf.Path, "/etc/opt/chrome/") {
			assert.Equal(t, []string{"chrome", "chrome-beta", "chrome-dev", "brave", "vivaldi", "opera"}, mf.Browsers)
		}
	}
	assert.Equal(t, "/usr/local/share/fillgate/extension", r.ExtensionDir)

	require.NoError(t, m.MkdirAll("/usr/lib64/mozilla", 0o755)) // as Fedora's mozilla-filesystem has it
	r, err = Install(context.Background(), o)
	require.NoError(t, err)
	assert.Contains(t, manifestPaths(r), "/usr/lib64/mozilla/native-messaging-hosts/dev.fillgate.host.json")
}

func TestInstallSystemWarnsAboutAPrivateBinary(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "chromium")
	m.put("/home/u/bin/fillgate", "bin", 0o700)
	o.Binary = "/home/u/bin/fillgate"
	o.System = true
	r, err := Install(context.Background(), o)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(r.Notes, "\n"), "other users cannot run /home/u/bin/fillgate")
}

func TestInstallWarnsAboutGoRunBinaries(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "chromium")
	m.put("/tmp/go-build123/b001/exe/fillgate", "bin", 0o755)
	o.Binary = "/tmp/go-build123/b001/exe/fillgate"
	r, err := Install(context.Background(), o)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(r.Notes, "\n"), "temporary build folder")
}

func TestDetectFindsBrowsersByProfileProgramOrCommand(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m)
	m.put("/home/u/.config/google-chrome/Local State", "{}", 0o600) // profile
	m.put("/opt/microsoft/msedge/msedge", "", 0o755)                // program
	m.put("/usr/bin/firefox", "", 0o755)                            // command on $PATH
	m.put("/usr/sbin/vivaldi", "", 0o755)                           // not on $PATH
	r, err := Install(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, []Found{
		{Browser: "chrome", Evidence: "/home/u/.config/google-chrome/Local State"},
		{Browser: "edge", Evidence: "/opt/microsoft/msedge/msedge"},
		{Browser: "firefox", Evidence: "/usr/bin/firefox"},
	}, r.Found)
	var skipped []string
	for _, s := range r.Skipped {
		skipped = append(skipped, s.Browser)
	}
	assert.Equal(t, []string{"chrome-beta", "chrome-dev", "chromium", "brave", "edge-beta", "edge-dev", "vivaldi", "opera", "librewolf", "waterfox"}, skipped)
	assert.Len(t, r.Manifests, 3)
	txt := r.Text()
	assert.Contains(t, txt, "Found:\n  chrome       ~/.config/google-chrome/Local State\n")
	assert.Contains(t, txt, "Skipped:\n  chrome-beta  not found (looked for ~/.config/google-chrome-beta/Local State, /opt/google/chrome-beta/chrome, google-chrome-beta on $PATH)")
}

func TestOurOwnOperaFolderDoesNotMakeChromeFound(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "opera")
	_, err := Install(context.Background(), o)
	require.NoError(t, err)
	o.Browsers = nil
	r, err := Install(context.Background(), o)
	require.ErrorIs(t, err, ErrNoBrowser, "~/.config/google-chrome now exists, but holds no Chrome profile")
	assert.Empty(t, r.Found)
}

func TestSandboxedChromiumGetsNoManifest(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m)
	m.put("/snap/bin/chromium", "", 0o755)                   // the Chromium Snap, on $PATH
	m.put("/home/u/.var/app/com.google.Chrome/x", "", 0o644) // the Chrome Flatpak
	m.put("/usr/bin/firefox", "", 0o755)
	r, err := Install(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, []string{"/home/u/.mozilla/native-messaging-hosts/dev.fillgate.host.json"}, manifestPaths(r))

	reasons := map[string]string{}
	for _, s := range r.Skipped {
		reasons[s.Browser] = s.Reason
	}
	assert.Equal(t, "only a sandboxed snap install was found (see below)", reasons["chromium"])
	assert.Equal(t, "only a sandboxed flatpak install was found (see below)", reasons["chrome"])
	require.Len(t, r.Sandboxed, 2)
	for _, s := range r.Sandboxed {
		assert.False(t, s.Works, s.Browser)
		assert.Contains(t, s.Detail, "fillgate writes none")
		assert.Contains(t, s.Detail, "vendor's .deb or .rpm")
	}
	assert.Contains(t, r.Sandboxed[0].Detail, "Google Chrome is a Flatpak (com.google.Chrome)")
	assert.Contains(t, r.Sandboxed[1].Detail, "Chromium is a Snap")
	assert.NotContains(t, strings.Join(m.files(), "\n"), ".var/app/com.google.Chrome/config", "nothing written inside the sandbox")
	assert.Contains(t, r.Text(), "Sandboxed browsers:")
}

func TestSandboxedFirefoxUsesTheHostManifest(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m)
	m.put("/snap/bin/firefox", "", 0o755)
	r, err := Install(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, []string{"/home/u/.mozilla/native-messaging-hosts/dev.fillgate.host.json"}, manifestPaths(r))
	require.Len(t, r.Sandboxed, 1)
	assert.True(t, r.Sandboxed[0].Works)
	assert.Contains(t, r.Sandboxed[0].Detail, "WebExtensions portal")

	m = newMemFS()
	o = linuxMem(m)
	m.put("/var/lib/flatpak/app/org.mozilla.firefox/current", "", 0o644)
	r, err = Install(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, []string{"/home/u/.mozilla/native-messaging-hosts/dev.fillgate.host.json"}, manifestPaths(r))
	require.Len(t, r.Sandboxed, 1)
	for _, want := range []string{"xdg-native-messaging-proxy", "Firefox 157",
		"flatpak override --user --talk-name=org.freedesktop.NativeMessagingProxy org.mozilla.firefox",
		"widget.use-xdg-desktop-portal.native-messaging-proxy"} {
		assert.Contains(t, r.Sandboxed[0].Detail, want)
	}
	assert.Equal(t, "install xdg-native-messaging-proxy; systemctl --user enable --now xdg-native-messaging-proxy.service; "+
		"flatpak override --user --talk-name=org.freedesktop.NativeMessagingProxy org.mozilla.firefox; "+
		"in about:config set widget.use-xdg-desktop-portal.native-messaging-proxy to 1", r.Sandboxed[0].Fix)
}

func TestDamagedRecordIsReported(t *testing.T) {
	m := newMemFS()
	o := linuxMem(m, "chromium")
	m.put("/home/u/.local/share/fillgate/install.json", "{not json", 0o600)
	_, err := Install(context.Background(), o)
	assert.ErrorContains(t, err, "the install record /home/u/.local/share/fillgate/install.json is damaged")
}

func TestOSPath(t *testing.T) {
	w := osPath("windows")
	assert.Equal(t, `C:\a\b\c.json`, w.join(`C:\a`, `b/c.json`))
	assert.Equal(t, `C:\a`, w.join(`C:\a\`, ""))
	assert.Equal(t, `\\srv\share\x`, w.join(`\\srv\share`, "x"))
	assert.Equal(t, `C:\a`, w.dir(`C:\a\b`))
	assert.Equal(t, `C:\`, w.dir(`C:\a`))
	assert.True(t, w.isAbs(`C:\x`))
	assert.True(t, w.isAbs(`\\srv\share`))
	assert.False(t, w.isAbs(`x\y`))
	assert.False(t, w.isAbs(`/x`))
	u := osPath("linux")
	assert.Equal(t, "/a/b", u.join("/a", "b"))
	assert.True(t, u.isAbs("/x"))
	assert.False(t, u.isAbs(`C:\x`))
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
		assert.ErrorContains(t, err, "only root can change", c.path)
		for _, f := range m.files() {
			assert.False(t, strings.HasPrefix(f, "/etc/"), "%s written for %s", f, c.path)
		}
	}
}
