//go:build !windows

package install

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fillgate/fillgate/extension"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rootedFS is the real filesystem under a temp root: "/home/u" is
// root/home/u. Tests see real files, modes and renames, and no browser
// installed on the machine running them.
type rootedFS struct{ root string }

func (r rootedFS) real(p string) string { return filepath.Join(r.root, p) }

func (r rootedFS) Stat(p string) (fs.FileInfo, error) { return OSFS{}.Stat(r.real(p)) }
func (r rootedFS) ReadFile(p string) ([]byte, error)  { return OSFS{}.ReadFile(r.real(p)) }
func (r rootedFS) Remove(p string) error              { return OSFS{}.Remove(r.real(p)) }
func (r rootedFS) ReadDir(p string) ([]fs.DirEntry, error) {
	return OSFS{}.ReadDir(r.real(p))
}
func (r rootedFS) MkdirAll(p string, perm fs.FileMode) error {
	return OSFS{}.MkdirAll(r.real(p), perm)
}
func (r rootedFS) WriteFile(p string, b []byte, perm fs.FileMode) error {
	return OSFS{}.WriteFile(r.real(p), b, perm)
}
func (r rootedFS) EvalSymlinks(p string) (string, error) {
	real, err := OSFS{}.EvalSymlinks(r.real(p))
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(r.root, real)
	if err != nil {
		return "", err
	}
	return "/" + rel, nil
}

// linuxHome is a temp HOME, /home/u, on the real filesystem, with a fake
// fillgate binary at /opt/fillgate/bin/fillgate.
type linuxHome struct {
	fs              rootedFS
	home, bin, data string
	env             map[string]string
}

func newLinuxHome(t *testing.T) *linuxHome {
	t.Helper()
	h := &linuxHome{
		fs:   rootedFS{t.TempDir()},
		home: "/home/u",
		bin:  "/opt/fillgate/bin/fillgate",
		data: "/home/u/.local/share/fillgate",
		env:  map[string]string{"HOME": "/home/u", "PATH": "/usr/local/bin:/usr/bin:/bin"},
	}
	require.NoError(t, os.MkdirAll(h.real(h.home), 0o700))
	h.writeBin(t, h.bin)
	return h
}

// real is where a path of the test's machine is on the real one.
func (h *linuxHome) real(p string) string { return h.fs.real(p) }

func (h *linuxHome) writeBin(t *testing.T, p string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(h.real(p)), 0o755))
	require.NoError(t, os.WriteFile(h.real(p), []byte("#!/bin/sh\nexit 0\n"), 0o755))
}

func (h *linuxHome) opts(browsers ...string) Options {
	return Options{
		Browsers: browsers,
		Binary:   h.bin,
		Env:      envOf(h.env),
		GOOS:     "linux",
		FS:       h.fs,
		DataDir:  h.data,
	}
}

// tree lists every file and folder under root (a real path) with its mode
// and content, for before/after comparisons.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out[rel+"/"] = info.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = info.Mode().String() + ":" + string(b)
		return nil
	})
	require.NoError(t, err)
	return out
}

func statuses(r *Report) map[string]Status {
	out := map[string]Status{}
	for _, m := range r.Manifests {
		out[m.Path] = m.Status
	}
	return out
}

const (
	chromePath   = "/home/u/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json"
	chromiumPath = "/home/u/.config/chromium/NativeMessagingHosts/dev.fillgate.host.json"
	firefoxPath  = "/home/u/.mozilla/native-messaging-hosts/dev.fillgate.host.json"
)

func TestInstallEveryLinuxBrowserGolden(t *testing.T) {
	h := newLinuxHome(t)
	r, err := Install(context.Background(), h.opts(namesFor("linux")...))
	require.NoError(t, err)
	js, err := r.JSON()
	require.NoError(t, err)
	golden(t, "linux-install.json", js)

	// Every manifest is where the table says, holding its family's manifest,
	// and nothing else was written but the extension and the record.
	want := map[string]manifest.Family{
		".config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json":               manifest.Chromium,
		".config/google-chrome-beta/NativeMessagingHosts/dev.fillgate.host.json":          manifest.Chromium,
		".config/google-chrome-unstable/NativeMessagingHosts/dev.fillgate.host.json":      manifest.Chromium,
		".config/chromium/NativeMessagingHosts/dev.fillgate.host.json":                    manifest.Chromium,
		".config/BraveSoftware/Brave-Browser/NativeMessagingHosts/dev.fillgate.host.json": manifest.Chromium,
		".config/microsoft-edge/NativeMessagingHosts/dev.fillgate.host.json":              manifest.Chromium,
		".config/microsoft-edge-beta/NativeMessagingHosts/dev.fillgate.host.json":         manifest.Chromium,
		".config/microsoft-edge-dev/NativeMessagingHosts/dev.fillgate.host.json":          manifest.Chromium,
		".config/vivaldi/NativeMessagingHosts/dev.fillgate.host.json":                     manifest.Chromium,
		".mozilla/native-messaging-hosts/dev.fillgate.host.json":                          manifest.Firefox,
		".librewolf/native-messaging-hosts/dev.fillgate.host.json":                        manifest.Firefox,
		".waterfox/native-messaging-hosts/dev.fillgate.host.json":                         manifest.Firefox,
		".local/share/fillgate/install.json":                                              "",
	}
	var got, wantPaths []string
	for rel := range tree(t, h.real(h.home)) {
		if !strings.HasSuffix(rel, "/") && !strings.HasPrefix(rel, ".local/share/fillgate/extension/") {
			got = append(got, rel)
		}
	}
	for p := range want {
		wantPaths = append(wantPaths, p)
	}
	sort.Strings(got)
	sort.Strings(wantPaths)
	assert.Equal(t, wantPaths, got)
	for rel, fam := range want {
		if fam == "" {
			continue
		}
		p := h.real(filepath.Join(h.home, rel))
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		golden(t, string(fam)+"-manifest.json", b)
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o644), fi.Mode().Perm(), rel)
	}

	// Opera shares Google Chrome's folder.
	for _, m := range r.Manifests {
		if m.Path == chromePath {
			assert.Equal(t, []string{"chrome", "opera"}, m.Browsers)
		}
	}
	// The embedded extension is unpacked whole, in a private folder.
	ext := tree(t, h.real(filepath.Join(h.data, "extension")))
	require.NoError(t, fs.WalkDir(extension.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			assert.Contains(t, ext, p)
		}
		return err
	}))
	assert.Equal(t, "drwx------", tree(t, h.real(h.data))["./"])
}

func TestInstallIsIdempotent(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chrome", "firefox"))
	require.NoError(t, err)
	before := tree(t, h.real("/"))

	r, err := Install(ctx, h.opts("chrome", "firefox"))
	require.NoError(t, err)
	require.Len(t, r.Manifests, 2)
	for p, s := range statuses(r) {
		assert.Equal(t, Unchanged, s, p)
	}
	assert.Equal(t, Unchanged, r.Extension)
	assert.Equal(t, before, tree(t, h.real("/")))
}

func TestInstallDryRunWritesNothing(t *testing.T) {
	h := newLinuxHome(t)
	before := tree(t, h.real("/"))
	o := h.opts("chrome", "firefox")
	o.DryRun = true
	r, err := Install(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, before, tree(t, h.real("/")))
	require.Len(t, r.Manifests, 2)
	for p, s := range statuses(r) {
		assert.Equal(t, Created, s, p)
	}
	txt := r.Text()
	assert.Contains(t, txt, "would create   ~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json (chrome)")
	assert.Contains(t, txt, "dry run: nothing written")
	js, err := r.JSON()
	require.NoError(t, err)
	assert.Contains(t, string(js), `"extension_dir": "/home/u/.local/share/fillgate/extension"`)
	assert.Contains(t, string(js), `"dry_run": true`)
}

// foreignManifest puts another tool's manifest at fillgate's file name.
func foreignManifest(t *testing.T, h *linuxHome, path string) []byte {
	t.Helper()
	b := []byte(`{"name": "dev.fillgate.host", "description": "hand-made", "path": "/opt/other/host", "type": "stdio",
  "allowed_origins": ["chrome-extension://` + strings.Repeat("c", 32) + `/"]}` + "\n")
	require.NoError(t, os.MkdirAll(filepath.Dir(h.real(path)), 0o755))
	require.NoError(t, os.WriteFile(h.real(path), b, 0o644))
	return b
}

func (h *linuxHome) read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(h.real(p))
	require.NoError(t, err)
	return string(b)
}

func TestInstallNeverOverwritesForeignWithoutForce(t *testing.T) {
	h := newLinuxHome(t)
	theirs := foreignManifest(t, h, chromePath)

	r, err := Install(context.Background(), h.opts("chrome", "chromium"))
	require.ErrorIs(t, err, ErrConflict)
	require.NotNil(t, r)
	st := statuses(r)
	assert.Equal(t, Conflict, st[chromePath])
	assert.Equal(t, Created, st[chromiumPath], "the other browsers are still installed")
	assert.Equal(t, string(theirs), h.read(t, chromePath), "left alone")
	assert.Contains(t, r.Text(), `it runs "/opt/other/host"; --force replaces it`)

	o := h.opts("chrome", "chromium")
	o.Force = true
	r, err = Install(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, Replaced, statuses(r)[chromePath])
	assert.Equal(t, h.read(t, chromiumPath), h.read(t, chromePath))
}

func TestInstallUpdatesItsOwnManifestAfterTheBinaryMoved(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chrome"))
	require.NoError(t, err)

	h.bin = "/usr/local/bin/fillgate"
	h.writeBin(t, h.bin)
	r, err := Install(ctx, h.opts("chrome"))
	require.NoError(t, err, "the record shows the old manifest is fillgate's")
	assert.Equal(t, Updated, statuses(r)[chromePath])
	assert.Contains(t, h.read(t, chromePath), `"path": "/usr/local/bin/fillgate"`)
}

func TestInstallTreatsAnEditedManifestAsNotOurs(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chrome"))
	require.NoError(t, err)
	edited := strings.Replace(h.read(t, chromePath), `"allowed_origins": [`, `"allowed_origins": [
    "chrome-extension://`+strings.Repeat("d", 32)+`/",`, 1)
	require.NoError(t, os.WriteFile(h.real(chromePath), []byte(edited), 0o644))

	h.bin = "/usr/local/bin/fillgate"
	h.writeBin(t, h.bin)
	r, err := Install(ctx, h.opts("chrome"))
	require.ErrorIs(t, err, ErrConflict)
	assert.Equal(t, Conflict, statuses(r)[chromePath])
	assert.Equal(t, edited, h.read(t, chromePath))
}

func TestInstallRefusesABinaryThatCannotRun(t *testing.T) {
	h := newLinuxHome(t)
	o := h.opts("chrome")
	o.Binary = "/opt/fillgate/bin/missing"
	_, err := Install(context.Background(), o)
	assert.ErrorContains(t, err, "the fillgate binary /opt/fillgate/bin/missing")

	require.NoError(t, os.Chmod(h.real(h.bin), 0o644))
	_, err = Install(context.Background(), h.opts("chrome"))
	assert.ErrorContains(t, err, "is not executable: run chmod +x /opt/fillgate/bin/fillgate")
	assert.NoDirExists(t, h.real("/home/u/.config"), "nothing written")
}

func TestInstallResolvesASymlinkedBinary(t *testing.T) {
	h := newLinuxHome(t)
	require.NoError(t, os.MkdirAll(h.real("/usr/local/bin"), 0o755))
	require.NoError(t, os.Symlink(h.real(h.bin), h.real("/usr/local/bin/fillgate")))
	o := h.opts("chromium")
	o.Binary = "/usr/local/bin/fillgate"
	r, err := Install(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, h.bin, r.Binary)
	assert.Contains(t, h.read(t, chromiumPath), `"path": "/opt/fillgate/bin/fillgate"`)
}

func TestInstallHonoursXDGConfigHome(t *testing.T) {
	h := newLinuxHome(t)
	h.env["XDG_CONFIG_HOME"] = "/home/u/cfg"
	_, err := Install(context.Background(), h.opts("chromium", "firefox"))
	require.NoError(t, err)
	assert.FileExists(t, h.real("/home/u/cfg/chromium/NativeMessagingHosts/dev.fillgate.host.json"))
	// Firefox keeps its manifests in ~/.mozilla whatever XDG_CONFIG_HOME says.
	assert.FileExists(t, h.real(firefoxPath))
}

func TestInstallUserDataDir(t *testing.T) {
	h := newLinuxHome(t)
	o := h.opts()
	o.UserDataDir = "/tmp/profile"
	r, err := Install(context.Background(), o)
	require.NoError(t, err)
	require.Len(t, r.Manifests, 1)
	assert.Equal(t, "/tmp/profile/NativeMessagingHosts/dev.fillgate.host.json", r.Manifests[0].Path)
	assert.Equal(t, ScopeProfile, r.Scope)
	assert.NoDirExists(t, h.real("/home/u/.config"), "nothing outside the profile")
	require.Len(t, r.Steps, 1)
	assert.Equal(t, []string{"chromium"}, r.Steps[0].Browsers)
	assert.Contains(t, h.read(t, "/tmp/profile/NativeMessagingHosts/dev.fillgate.host.json"), manifest.ExtensionOrigin)

	o.Browsers = []string{"firefox"}
	_, err = Install(context.Background(), o)
	assert.ErrorContains(t, err, "--user-data-dir is for Chromium-family browsers")

	o.Browsers = []string{"brave"}
	r, err = Install(context.Background(), o)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(r.Notes, "\n"), "Brave reads host manifests from its default folder")
}

func TestInstallNamesUnknownBrowsers(t *testing.T) {
	h := newLinuxHome(t)
	_, err := Install(context.Background(), h.opts("netscape"))
	assert.ErrorContains(t, err, `unknown browser "netscape"; fillgate knows: chrome, chrome-beta`)
	_, err = Install(context.Background(), h.opts("arc"))
	assert.ErrorContains(t, err, "Arc is not available on linux")
	r, err := Install(context.Background(), h.opts("Google-Chrome"))
	require.NoError(t, err, "aliases and any case")
	assert.Equal(t, []string{"chrome"}, r.Manifests[0].Browsers)
}

func TestInstallWithNothingFound(t *testing.T) {
	h := newLinuxHome(t)
	before := tree(t, h.real("/"))
	r, err := Install(context.Background(), h.opts())
	require.ErrorIs(t, err, ErrNoBrowser)
	assert.Len(t, r.Skipped, len(namesFor("linux")))
	assert.Contains(t, r.Skipped[0].Reason, "not found (looked for ~/.config/google-chrome/Local State, /opt/google/chrome/chrome, google-chrome or google-chrome-stable on $PATH)")
	assert.Equal(t, before, tree(t, h.real("/")), "nothing written")
}

func TestUninstallRemovesExactlyWhatInstallWrote(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	// What the user had before: a Chromium profile folder holding another
	// host's manifest beside where fillgate's goes.
	other := "/home/u/.config/chromium/NativeMessagingHosts/com.other.host.json"
	require.NoError(t, os.MkdirAll(filepath.Dir(h.real(other)), 0o700))
	require.NoError(t, os.WriteFile(h.real(other), []byte(`{"name":"com.other.host"}`), 0o644))
	before := tree(t, h.real("/"))

	_, err := Install(ctx, h.opts(namesFor("linux")...))
	require.NoError(t, err)
	// A file the user put into the extension folder is not fillgate's.
	mine := filepath.Join(h.data, "extension", "my-notes.txt")
	require.NoError(t, os.WriteFile(h.real(mine), []byte("mine"), 0o644))

	r, err := Uninstall(ctx, h.opts())
	require.NoError(t, err)
	assert.Equal(t, Removed, r.Extension)
	assert.Len(t, r.Manifests, 12)
	for _, m := range r.Manifests {
		assert.Equal(t, Removed, m.Status, m.Path)
	}

	after := tree(t, h.real("/"))
	assert.Equal(t, "-rw-r--r--:mine", after["home/u/.local/share/fillgate/extension/my-notes.txt"])
	// What remains beyond what was there: the user's file and the data
	// folders holding it.
	for _, p := range []string{"home/u/.local/share/fillgate/extension/my-notes.txt", "home/u/.local/",
		"home/u/.local/share/", "home/u/.local/share/fillgate/", "home/u/.local/share/fillgate/extension/"} {
		assert.Contains(t, after, p)
		delete(after, p)
	}
	assert.Equal(t, before, after)
}

func TestUninstallLeavesForeignManifests(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chromium"))
	require.NoError(t, err)
	theirs := foreignManifest(t, h, chromePath)

	r, err := Uninstall(ctx, h.opts())
	require.NoError(t, err)
	st := statuses(r)
	assert.Equal(t, Kept, st[chromePath])
	assert.Equal(t, Removed, st[chromiumPath])
	assert.Equal(t, string(theirs), h.read(t, chromePath))
	assert.Contains(t, r.Text(), "kept           ~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json")
}

func TestUninstallKeepsAManifestAnotherBrowserStillUses(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chrome", "opera", "firefox"))
	require.NoError(t, err)

	r, err := Uninstall(ctx, h.opts("opera"))
	require.NoError(t, err)
	require.Len(t, r.Manifests, 1)
	assert.Equal(t, Kept, r.Manifests[0].Status)
	assert.Equal(t, "still used by chrome", r.Manifests[0].Detail)
	assert.FileExists(t, h.real(chromePath))
	assert.Equal(t, Kept, r.Extension)

	r, err = Uninstall(ctx, h.opts("chrome"))
	require.NoError(t, err)
	assert.Equal(t, Removed, statuses(r)[chromePath])
	assert.NoFileExists(t, h.real(chromePath))
	assert.NoDirExists(t, h.real("/home/u/.config/google-chrome"), "install created it")
	assert.FileExists(t, h.real(filepath.Join(h.data, "extension", "manifest.json")), "Firefox still has its manifest")

	r, err = Uninstall(ctx, h.opts("firefox"))
	require.NoError(t, err)
	assert.Equal(t, Removed, r.Extension)
	assert.NoDirExists(t, h.real(filepath.Join(h.data, "extension")))
	assert.NoFileExists(t, h.real(filepath.Join(h.data, "install.json")))
}

func TestUninstallDryRunRemovesNothing(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chrome", "firefox"))
	require.NoError(t, err)
	before := tree(t, h.real("/"))
	o := h.opts()
	o.DryRun = true
	r, err := Uninstall(ctx, o)
	require.NoError(t, err)
	assert.Equal(t, before, tree(t, h.real("/")))
	assert.Equal(t, Removed, r.Extension)
	assert.Contains(t, r.Text(), "would remove   ~/.mozilla/native-messaging-hosts/dev.fillgate.host.json (firefox)")
}

func TestUninstallWithoutRecordRemovesOnlyIdenticalFiles(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chromium", "chrome"))
	require.NoError(t, err)
	require.NoError(t, os.Remove(h.real(filepath.Join(h.data, "install.json"))))
	theirs := foreignManifest(t, h, chromePath)

	r, err := Uninstall(ctx, h.opts())
	require.NoError(t, err)
	assert.Equal(t, Removed, statuses(r)[chromiumPath])
	assert.Equal(t, Kept, statuses(r)[chromePath])
	assert.Equal(t, string(theirs), h.read(t, chromePath))
	assert.Equal(t, Removed, r.Extension)
	assert.NoFileExists(t, h.real(filepath.Join(h.data, "extension", "manifest.json")))
}

func TestReinstallReplacesTheExtensionCleanly(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	o := h.opts("chromium")
	o.Extension = fstest.MapFS{
		"manifest.json": {Data: []byte(`{"version": "1"}`)},
		"sw.js":         {Data: []byte("v1")},
		"old/gone.js":   {Data: []byte("old")},
	}
	_, err := Install(ctx, o)
	require.NoError(t, err)
	ext := h.real(filepath.Join(h.data, "extension"))
	assert.FileExists(t, filepath.Join(ext, "old/gone.js"))
	require.NoError(t, os.WriteFile(filepath.Join(ext, "user.txt"), []byte("u"), 0o644))

	o.Extension = fstest.MapFS{
		"manifest.json": {Data: []byte(`{"version": "2"}`)},
		"sw.js":         {Data: []byte("v2")},
	}
	r, err := Install(ctx, o)
	require.NoError(t, err)
	assert.Equal(t, Updated, r.Extension)
	got := tree(t, ext)
	assert.Equal(t, map[string]string{
		"./":            "drwx------",
		"manifest.json": "-rw-r--r--:" + `{"version": "2"}`,
		"sw.js":         "-rw-r--r--:v2",
		"user.txt":      "-rw-r--r--:u",
	}, got)
}

func TestInstallStopsWhenTheContextEnds(t *testing.T) {
	h := newLinuxHome(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Install(ctx, h.opts("chrome"))
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

func TestReportText(t *testing.T) {
	h := newLinuxHome(t)
	r, err := Install(context.Background(), h.opts("chrome", "firefox"))
	require.NoError(t, err)
	txt := r.Text()
	for _, want := range []string{
		"fillgate install, user scope, binary /opt/fillgate/bin/fillgate",
		"created        ~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json (chrome)",
		"created        ~/.mozilla/native-messaging-hosts/dev.fillgate.host.json (firefox)",
		"Extension: created ~/.local/share/fillgate/extension",
		"  Google Chrome:\n    1. Open chrome://extensions\n    2. Turn on \"Developer mode\" (top right).\n    3. Click \"Load unpacked\" and choose /home/u/.local/share/fillgate/extension\n",
		"  Firefox:\n    1. Open about:debugging#/runtime/this-firefox\n    2. Click \"Load Temporary Add-on…\" and choose /home/u/.local/share/fillgate/extension/manifest.json\n",
		"a permanent install needs a signed XPI, which fillgate does not ship yet",
		"Then run `fillgate doctor`",
	} {
		assert.Contains(t, txt, want)
	}
}

func BenchmarkInstallEveryLinuxBrowserAgain(b *testing.B) {
	root := b.TempDir()
	h := &linuxHome{fs: rootedFS{root}, home: "/home/u", bin: "/opt/fillgate/bin/fillgate", data: "/home/u/.local/share/fillgate",
		env: map[string]string{"HOME": "/home/u", "PATH": "/usr/bin"}}
	require.NoError(b, os.MkdirAll(h.real(filepath.Dir(h.bin)), 0o755))
	require.NoError(b, os.WriteFile(h.real(h.bin), []byte("#!/bin/sh\n"), 0o755))
	o := h.opts(namesFor("linux")...)
	_, err := Install(context.Background(), o)
	require.NoError(b, err)
	for b.Loop() {
		if _, err := Install(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDoctor(b *testing.B) {
	root := b.TempDir()
	h := &linuxHome{fs: rootedFS{root}, home: "/home/u", bin: "/opt/fillgate/bin/fillgate", data: "/home/u/.local/share/fillgate",
		env: map[string]string{"HOME": "/home/u", "PATH": "/usr/bin"}}
	require.NoError(b, os.MkdirAll(h.real(filepath.Dir(h.bin)), 0o755))
	require.NoError(b, os.WriteFile(h.real(h.bin), []byte("#!/bin/sh\n"), 0o755))
	_, err := Install(context.Background(), h.opts("chrome", "firefox"))
	require.NoError(b, err)
	o := h.opts()
	o.RuntimeDir = runDir
	for b.Loop() {
		if d := Doctor(context.Background(), o, Probes{}); d.ExitCode() != 0 {
			b.Fatal(d.Text())
		}
	}
}
