//go:build !windows

package install

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fillgate/fillgate/extension"
	"github.com/fillgate/fillgate/internal/doctor"
	"github.com/fillgate/fillgate/internal/manifest"
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
	if err := os.MkdirAll(h.real(h.home), 0o700); err != nil {
		t.Fatal(err)
	}
	h.writeBin(t, h.bin)
	return h
}

// real is where a path of the test's machine is on the real one.
func (h *linuxHome) real(p string) string { return h.fs.real(p) }

func (h *linuxHome) writeBin(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(h.real(p)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.real(p), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
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

// fileExists fails the test unless path is a file (not a folder).
func fileExists(t *testing.T, path, what string) {
	t.Helper()
	info, err := os.Lstat(path)
	switch {
	case err != nil:
		t.Errorf("%s: want the file %s: %v", what, path, err)
	case info.IsDir():
		t.Errorf("%s: %s is a folder, want a file", what, path)
	}
}

// noFileExists fails the test when path is a file (a folder, or nothing
// there, passes).
func noFileExists(t *testing.T, path, what string) {
	t.Helper()
	if info, err := os.Lstat(path); err == nil && !info.IsDir() {
		t.Errorf("%s: the file %s exists, want none", what, path)
	}
}

// noDirExists fails the test when path is a folder (a file, or nothing
// there, passes).
func noDirExists(t *testing.T, path, what string) {
	t.Helper()
	if info, err := os.Lstat(path); err == nil && info.IsDir() {
		t.Errorf("%s: the folder %s exists, want none", what, path)
	}
}

// sameTree fails the test unless the trees got and want (from tree) are
// equal, and names the paths that differ.
func sameTree(t *testing.T, got, want map[string]string, what string) {
	t.Helper()
	var diff []string
	for p, w := range want {
		if g, ok := got[p]; !ok {
			diff = append(diff, "missing "+p)
		} else if g != w {
			diff = append(diff, "changed "+p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diff = append(diff, "new "+p)
		}
	}
	if len(diff) > 0 {
		sort.Strings(diff)
		t.Errorf("%s: the tree differs from the one wanted: %s", what, strings.Join(diff, "; "))
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
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
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
	if !reflect.DeepEqual(got, wantPaths) {
		t.Errorf("install wrote %q, want %q", got, wantPaths)
	}
	for rel, fam := range want {
		if fam == "" {
			continue
		}
		p := h.real(filepath.Join(h.home, rel))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, string(fam)+"-manifest.json", b)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), fs.FileMode(0o644); got != want {
			t.Errorf("%s: mode %v, want %v", rel, got, want)
		}
	}

	// Opera shares Google Chrome's folder.
	for _, m := range r.Manifests {
		if m.Path == chromePath {
			if want := []string{"chrome", "opera"}; !reflect.DeepEqual(m.Browsers, want) {
				t.Errorf("m.Browsers = %v, want %v", m.Browsers, want)
			}
		}
	}
	// The embedded extension is unpacked whole, in a private folder.
	ext := tree(t, h.real(filepath.Join(h.data, "extension")))
	if err := fs.WalkDir(extension.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if _, ok := ext[p]; !ok {
				t.Errorf("the unpacked extension lacks %s", p)
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, h.real(h.data))["./"]; got != "drwx------" {
		t.Errorf("the data folder's mode is %q, want %q", got, "drwx------")
	}
}

func TestInstallIsIdempotent(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chrome", "firefox"))
	if err != nil {
		t.Fatal(err)
	}
	before := tree(t, h.real("/"))

	r, err := Install(ctx, h.opts("chrome", "firefox"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Manifests) != 2 {
		t.Fatalf("r.Manifests has %d items (%v), want %d", len(r.Manifests), r.Manifests, 2)
	}
	for p, s := range statuses(r) {
		if s != Unchanged {
			t.Errorf("%v: got %v, want %v", p, s, Unchanged)
		}
	}
	if r.Extension != Unchanged {
		t.Errorf("r.Extension = %v, want %v", r.Extension, Unchanged)
	}
	sameTree(t, tree(t, h.real("/")), before, "a second install")
}

func TestInstallDryRunWritesNothing(t *testing.T) {
	h := newLinuxHome(t)
	before := tree(t, h.real("/"))
	o := h.opts("chrome", "firefox")
	o.DryRun = true
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, tree(t, h.real("/")), before, "a dry run")
	if len(r.Manifests) != 2 {
		t.Fatalf("r.Manifests has %d items (%v), want %d", len(r.Manifests), r.Manifests, 2)
	}
	for p, s := range statuses(r) {
		if s != Created {
			t.Errorf("%v: got %v, want %v", p, s, Created)
		}
	}
	txt := r.Text()
	if !strings.Contains(txt, "would create   ~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json (chrome)") {
		t.Errorf("got %q; want it to contain %q", txt, "would create   ~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json (chrome)")
	}
	if !strings.Contains(txt, "dry run: nothing written") {
		t.Errorf("got %q; want it to contain %q", txt, "dry run: nothing written")
	}
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(js); !strings.Contains(got, `"extension_dir": "/home/u/.local/share/fillgate/extension"`) {
		t.Errorf("got %q; want it to contain %q", got, `"extension_dir": "/home/u/.local/share/fillgate/extension"`)
	}
	if got := string(js); !strings.Contains(got, `"dry_run": true`) {
		t.Errorf("got %q; want it to contain %q", got, `"dry_run": true`)
	}
}

// foreignManifest puts another tool's manifest at fillgate's file name.
func foreignManifest(t *testing.T, h *linuxHome, path string) []byte {
	t.Helper()
	b := []byte(`{"name": "dev.fillgate.host", "description": "hand-made", "path": "/opt/other/host", "type": "stdio",
  "allowed_origins": ["chrome-extension://` + strings.Repeat("c", 32) + `/"]}` + "\n")
	if err := os.MkdirAll(filepath.Dir(h.real(path)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.real(path), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

func (h *linuxHome) read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(h.real(p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInstallNeverOverwritesForeignWithoutForce(t *testing.T) {
	h := newLinuxHome(t)
	theirs := foreignManifest(t, h, chromePath)

	r, err := Install(context.Background(), h.opts("chrome", "chromium"))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("error %v; want %v", err, ErrConflict)
	}
	if r == nil {
		t.Fatalf("Install with a conflict returned no report, want one")
	}
	st := statuses(r)
	if st[chromePath] != Conflict {
		t.Errorf("st[chromePath] = %v, want %v", st[chromePath], Conflict)
	}
	if st[chromiumPath] != Created {
		t.Errorf("the other browsers are still installed: got %v, want %v", st[chromiumPath], Created)
	}
	if got, want := h.read(t, chromePath), string(theirs); got != want {
		t.Errorf("left alone: got %q, want %q", got, want)
	}
	if got := r.Text(); !strings.Contains(got, `it runs "/opt/other/host"; --force replaces it`) {
		t.Errorf("got %q; want it to contain %q", got, `it runs "/opt/other/host"; --force replaces it`)
	}

	o := h.opts("chrome", "chromium")
	o.Force = true
	r, err = Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(r)[chromePath]; got != Replaced {
		t.Errorf("statuses(r)[chromePath] = %v, want %v", got, Replaced)
	}
	if got, want := h.read(t, chromePath), h.read(t, chromiumPath); got != want {
		t.Errorf("chrome's manifest = %v, want %v", got, want)
	}
}

func TestInstallUpdatesItsOwnManifestAfterTheBinaryMoved(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chrome"))
	if err != nil {
		t.Fatal(err)
	}

	h.bin = "/usr/local/bin/fillgate"
	h.writeBin(t, h.bin)
	r, err := Install(ctx, h.opts("chrome"))
	if err != nil {
		t.Fatalf("the record shows the old manifest is fillgate's: %v", err)
	}
	if got := statuses(r)[chromePath]; got != Updated {
		t.Errorf("statuses(r)[chromePath] = %v, want %v", got, Updated)
	}
	if got := h.read(t, chromePath); !strings.Contains(got, `"path": "/usr/local/bin/fillgate"`) {
		t.Errorf("got %q; want it to contain %q", got, `"path": "/usr/local/bin/fillgate"`)
	}
}

func TestInstallTreatsAnEditedManifestAsNotOurs(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chrome"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(h.read(t, chromePath), `"allowed_origins": [`, `"allowed_origins": [
    "chrome-extension://`+strings.Repeat("d", 32)+`/",`, 1)
	if err := os.WriteFile(h.real(chromePath), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	h.bin = "/usr/local/bin/fillgate"
	h.writeBin(t, h.bin)
	r, err := Install(ctx, h.opts("chrome"))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("error %v; want %v", err, ErrConflict)
	}
	if got := statuses(r)[chromePath]; got != Conflict {
		t.Errorf("statuses(r)[chromePath] = %v, want %v", got, Conflict)
	}
	if got := h.read(t, chromePath); got != edited {
		t.Errorf("chrome's manifest = %v, want %v", got, edited)
	}
}

func TestInstallRefusesABinaryThatCannotRun(t *testing.T) {
	h := newLinuxHome(t)
	o := h.opts("chrome")
	o.Binary = "/opt/fillgate/bin/missing"
	_, err := Install(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "the fillgate binary /opt/fillgate/bin/missing") {
		t.Errorf("Install(context.Background(), o): error %v; want one containing %q", err, "the fillgate binary /opt/fillgate/bin/missing")
	}

	if err := os.Chmod(h.real(h.bin), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Install(context.Background(), h.opts("chrome"))
	if err == nil || !strings.Contains(err.Error(), "is not executable: run chmod +x /opt/fillgate/bin/fillgate") {
		t.Errorf("Install(context.Background(), h.opts(\"chrome\")): error %v; want one containing %q", err, "is not executable: run chmod +x /opt/fillgate/bin/fillgate")
	}
	noDirExists(t, h.real("/home/u/.config"), "nothing written")
}

func TestInstallResolvesASymlinkedBinary(t *testing.T) {
	h := newLinuxHome(t)
	if err := os.MkdirAll(h.real("/usr/local/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.real(h.bin), h.real("/usr/local/bin/fillgate")); err != nil {
		t.Fatal(err)
	}
	o := h.opts("chromium")
	o.Binary = "/usr/local/bin/fillgate"
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Binary != h.bin {
		t.Errorf("r.Binary = %v, want %v", r.Binary, h.bin)
	}
	if got := h.read(t, chromiumPath); !strings.Contains(got, `"path": "/opt/fillgate/bin/fillgate"`) {
		t.Errorf("got %q; want it to contain %q", got, `"path": "/opt/fillgate/bin/fillgate"`)
	}
}

func TestInstallHonoursXDGConfigHome(t *testing.T) {
	h := newLinuxHome(t)
	h.env["XDG_CONFIG_HOME"] = "/home/u/cfg"
	_, err := Install(context.Background(), h.opts("chromium", "firefox"))
	if err != nil {
		t.Fatal(err)
	}
	fileExists(t, h.real("/home/u/cfg/chromium/NativeMessagingHosts/dev.fillgate.host.json"), "Chromium's manifest under XDG_CONFIG_HOME")
	// Firefox keeps its manifests in ~/.mozilla whatever XDG_CONFIG_HOME says.
	fileExists(t, h.real(firefoxPath), "Firefox's manifest in ~/.mozilla")
}

// TestInstallHonoursChromeConfigHome: Chromium on Linux takes its user
// data directory, and so its NativeMessagingHosts folder, from
// CHROME_CONFIG_HOME before XDG_CONFIG_HOME (measured with Debian's
// Chromium: its profile goes there and nothing to ~/.config); Firefox does
// not read it.
func TestInstallHonoursChromeConfigHome(t *testing.T) {
	h := newLinuxHome(t)
	h.env["XDG_CONFIG_HOME"] = "/home/u/cfg"
	h.env["CHROME_CONFIG_HOME"] = "/home/u/cch"
	_, err := Install(context.Background(), h.opts("chromium", "firefox"))
	if err != nil {
		t.Fatal(err)
	}
	fileExists(t, h.real("/home/u/cch/chromium/NativeMessagingHosts/dev.fillgate.host.json"), "Chromium's manifest under CHROME_CONFIG_HOME")
	fileExists(t, h.real(firefoxPath), "Firefox's manifest in ~/.mozilla")
}

func TestInstallUserDataDir(t *testing.T) {
	h := newLinuxHome(t)
	o := h.opts()
	o.UserDataDir = "/tmp/profile"
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Manifests) != 1 {
		t.Fatalf("r.Manifests has %d items (%v), want %d", len(r.Manifests), r.Manifests, 1)
	}
	if r.Manifests[0].Path != "/tmp/profile/NativeMessagingHosts/dev.fillgate.host.json" {
		t.Errorf("r.Manifests[0].Path = %q, want %q", r.Manifests[0].Path, "/tmp/profile/NativeMessagingHosts/dev.fillgate.host.json")
	}
	if r.Scope != ScopeProfile {
		t.Errorf("r.Scope = %v, want %v", r.Scope, ScopeProfile)
	}
	noDirExists(t, h.real("/home/u/.config"), "nothing outside the profile")
	if len(r.Steps) != 1 {
		t.Fatalf("r.Steps has %d items (%v), want %d", len(r.Steps), r.Steps, 1)
	}
	if want := []string{"chromium"}; !reflect.DeepEqual(r.Steps[0].Browsers, want) {
		t.Errorf("r.Steps[0].Browsers = %v, want %v", r.Steps[0].Browsers, want)
	}
	if got := h.read(t, "/tmp/profile/NativeMessagingHosts/dev.fillgate.host.json"); !strings.Contains(got, manifest.ExtensionOrigin) {
		t.Errorf("got %q; want it to contain %q", got, manifest.ExtensionOrigin)
	}

	o.Browsers = []string{"firefox"}
	_, err = Install(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "--user-data-dir is for Chromium-family browsers") {
		t.Errorf("Install(context.Background(), o): error %v; want one containing %q", err, "--user-data-dir is for Chromium-family browsers")
	}

	o.Browsers = []string{"brave"}
	r, err = Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Notes, "\n"); !strings.Contains(got, "Brave reads host manifests from its default folder") {
		t.Errorf("got %q; want it to contain %q", got, "Brave reads host manifests from its default folder")
	}
}

func TestInstallNamesUnknownBrowsers(t *testing.T) {
	h := newLinuxHome(t)
	_, err := Install(context.Background(), h.opts("netscape"))
	if err == nil || !strings.Contains(err.Error(), `unknown browser "netscape"; fillgate knows: chrome, chrome-beta`) {
		t.Errorf("Install(context.Background(), h.opts(\"netscape\")): error %v; want one containing %q", err, `unknown browser "netscape"; fillgate knows: chrome, chrome-beta`)
	}
	_, err = Install(context.Background(), h.opts("arc"))
	if err == nil || !strings.Contains(err.Error(), "Arc is not available on linux") {
		t.Errorf("Install(context.Background(), h.opts(\"arc\")): error %v; want one containing %q", err, "Arc is not available on linux")
	}
	r, err := Install(context.Background(), h.opts("Google-Chrome"))
	if err != nil {
		t.Fatalf("aliases and any case: %v", err)
	}
	if want := []string{"chrome"}; !reflect.DeepEqual(r.Manifests[0].Browsers, want) {
		t.Errorf("r.Manifests[0].Browsers = %v, want %v", r.Manifests[0].Browsers, want)
	}
}

func TestInstallWithNothingFound(t *testing.T) {
	h := newLinuxHome(t)
	before := tree(t, h.real("/"))
	r, err := Install(context.Background(), h.opts())
	if !errors.Is(err, ErrNoBrowser) {
		t.Fatalf("error %v; want %v", err, ErrNoBrowser)
	}
	if len(r.Skipped) != len(namesFor("linux")) {
		t.Errorf("r.Skipped has %d items (%v), want %d", len(r.Skipped), r.Skipped, len(namesFor("linux")))
	}
	if !strings.Contains(r.Skipped[0].Reason, "not found (looked for ~/.config/google-chrome/Local State, /opt/google/chrome/chrome, google-chrome or google-chrome-stable on $PATH)") {
		t.Errorf("got %q; want it to contain %q", r.Skipped[0].Reason, "not found (looked for ~/.config/google-chrome/Local State, /opt/google/chrome/chrome, google-chrome or google-chrome-stable on $PATH)")
	}
	sameTree(t, tree(t, h.real("/")), before, "nothing written")
}

func TestUninstallRemovesExactlyWhatInstallWrote(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	// What the user had before: a Chromium profile folder holding another
	// host's manifest beside where fillgate's goes.
	other := "/home/u/.config/chromium/NativeMessagingHosts/com.other.host.json"
	if err := os.MkdirAll(filepath.Dir(h.real(other)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.real(other), []byte(`{"name":"com.other.host"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, h.real("/"))

	_, err := Install(ctx, h.opts(namesFor("linux")...))
	if err != nil {
		t.Fatal(err)
	}
	// A file the user put into the extension folder is not fillgate's.
	mine := filepath.Join(h.data, "extension", "my-notes.txt")
	if err := os.WriteFile(h.real(mine), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}

	r, err := Uninstall(ctx, h.opts())
	if err != nil {
		t.Fatal(err)
	}
	if r.Extension != Removed {
		t.Errorf("r.Extension = %v, want %v", r.Extension, Removed)
	}
	if len(r.Manifests) != 12 {
		t.Errorf("r.Manifests has %d items (%v), want %d", len(r.Manifests), r.Manifests, 12)
	}
	for _, m := range r.Manifests {
		if m.Status != Removed {
			t.Errorf("%v: got %v, want %v", m.Path, m.Status, Removed)
		}
	}

	after := tree(t, h.real("/"))
	if got := after["home/u/.local/share/fillgate/extension/my-notes.txt"]; got != "-rw-r--r--:mine" {
		t.Errorf("the user's file after uninstall: got %q, want %q", got, "-rw-r--r--:mine")
	}
	// What remains beyond what was there: the user's file and the data
	// folders holding it.
	for _, p := range []string{"home/u/.local/share/fillgate/extension/my-notes.txt", "home/u/.local/",
		"home/u/.local/share/", "home/u/.local/share/fillgate/", "home/u/.local/share/fillgate/extension/"} {
		if _, ok := after[p]; !ok {
			t.Errorf("uninstall removed %s, want it kept", p)
		}
		delete(after, p)
	}
	sameTree(t, after, before, "the tree after uninstall")
}

func TestUninstallLeavesForeignManifests(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chromium"))
	if err != nil {
		t.Fatal(err)
	}
	theirs := foreignManifest(t, h, chromePath)

	r, err := Uninstall(ctx, h.opts())
	if err != nil {
		t.Fatal(err)
	}
	st := statuses(r)
	if st[chromePath] != Kept {
		t.Errorf("st[chromePath] = %v, want %v", st[chromePath], Kept)
	}
	if st[chromiumPath] != Removed {
		t.Errorf("st[chromiumPath] = %v, want %v", st[chromiumPath], Removed)
	}
	if got, want := h.read(t, chromePath), string(theirs); got != want {
		t.Errorf("chrome's manifest = %q, want %q", got, want)
	}
	if got := r.Text(); !strings.Contains(got, "kept           ~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json") {
		t.Errorf("got %q; want it to contain %q", got, "kept           ~/.config/google-chrome/NativeMessagingHosts/dev.fillgate.host.json")
	}
}

func TestUninstallKeepsAManifestAnotherBrowserStillUses(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chrome", "opera", "firefox"))
	if err != nil {
		t.Fatal(err)
	}

	r, err := Uninstall(ctx, h.opts("opera"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Manifests) != 1 {
		t.Fatalf("r.Manifests has %d items (%v), want %d", len(r.Manifests), r.Manifests, 1)
	}
	if r.Manifests[0].Status != Kept {
		t.Errorf("r.Manifests[0].Status = %v, want %v", r.Manifests[0].Status, Kept)
	}
	if r.Manifests[0].Detail != "still used by chrome" {
		t.Errorf("r.Manifests[0].Detail = %q, want %q", r.Manifests[0].Detail, "still used by chrome")
	}
	fileExists(t, h.real(chromePath), "the manifest chrome still uses")
	if r.Extension != Kept {
		t.Errorf("r.Extension = %v, want %v", r.Extension, Kept)
	}

	r, err = Uninstall(ctx, h.opts("chrome"))
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(r)[chromePath]; got != Removed {
		t.Errorf("statuses(r)[chromePath] = %v, want %v", got, Removed)
	}
	noFileExists(t, h.real(chromePath), "chrome's manifest once chrome is uninstalled")
	noDirExists(t, h.real("/home/u/.config/google-chrome"), "install created it")
	fileExists(t, h.real(filepath.Join(h.data, "extension", "manifest.json")), "Firefox still has its manifest")

	r, err = Uninstall(ctx, h.opts("firefox"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Extension != Removed {
		t.Errorf("r.Extension = %v, want %v", r.Extension, Removed)
	}
	noDirExists(t, h.real(filepath.Join(h.data, "extension")), "the extension once no browser uses it")
	noFileExists(t, h.real(filepath.Join(h.data, "install.json")), "the record once nothing is installed")
}

func TestUninstallDryRunRemovesNothing(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chrome", "firefox"))
	if err != nil {
		t.Fatal(err)
	}
	before := tree(t, h.real("/"))
	o := h.opts()
	o.DryRun = true
	r, err := Uninstall(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, tree(t, h.real("/")), before, "a dry run")
	if r.Extension != Removed {
		t.Errorf("r.Extension = %v, want %v", r.Extension, Removed)
	}
	if got := r.Text(); !strings.Contains(got, "would remove   ~/.mozilla/native-messaging-hosts/dev.fillgate.host.json (firefox)") {
		t.Errorf("got %q; want it to contain %q", got, "would remove   ~/.mozilla/native-messaging-hosts/dev.fillgate.host.json (firefox)")
	}
}

func TestUninstallWithoutRecordRemovesOnlyIdenticalFiles(t *testing.T) {
	h := newLinuxHome(t)
	ctx := context.Background()
	_, err := Install(ctx, h.opts("chromium", "chrome"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(h.real(filepath.Join(h.data, "install.json"))); err != nil {
		t.Fatal(err)
	}
	theirs := foreignManifest(t, h, chromePath)

	r, err := Uninstall(ctx, h.opts())
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(r)[chromiumPath]; got != Removed {
		t.Errorf("statuses(r)[chromiumPath] = %v, want %v", got, Removed)
	}
	if got := statuses(r)[chromePath]; got != Kept {
		t.Errorf("statuses(r)[chromePath] = %v, want %v", got, Kept)
	}
	if got, want := h.read(t, chromePath), string(theirs); got != want {
		t.Errorf("chrome's manifest = %q, want %q", got, want)
	}
	if r.Extension != Removed {
		t.Errorf("r.Extension = %v, want %v", r.Extension, Removed)
	}
	noFileExists(t, h.real(filepath.Join(h.data, "extension", "manifest.json")), "the unpacked extension")
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
	if err != nil {
		t.Fatal(err)
	}
	ext := h.real(filepath.Join(h.data, "extension"))
	fileExists(t, filepath.Join(ext, "old/gone.js"), "the first install's file")
	if err := os.WriteFile(filepath.Join(ext, "user.txt"), []byte("u"), 0o644); err != nil {
		t.Fatal(err)
	}

	o.Extension = fstest.MapFS{
		"manifest.json": {Data: []byte(`{"version": "2"}`)},
		"sw.js":         {Data: []byte("v2")},
	}
	r, err := Install(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Extension != Updated {
		t.Errorf("r.Extension = %v, want %v", r.Extension, Updated)
	}
	sameTree(t, tree(t, ext), map[string]string{
		"./":            "drwx------",
		"manifest.json": "-rw-r--r--:" + `{"version": "2"}`,
		"sw.js":         "-rw-r--r--:v2",
		"user.txt":      "-rw-r--r--:u",
	}, "the extension folder")
}

func TestInstallStopsWhenTheContextEnds(t *testing.T) {
	h := newLinuxHome(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Install(ctx, h.opts("chrome"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Install with an ended context: error %v, want context.Canceled", err)
	}
}

func TestReportText(t *testing.T) {
	h := newLinuxHome(t)
	r, err := Install(context.Background(), h.opts("chrome", "firefox"))
	if err != nil {
		t.Fatal(err)
	}
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
		if !strings.Contains(txt, want) {
			t.Errorf("got %q; want it to contain %q", txt, want)
		}
	}
}

func BenchmarkInstallEveryLinuxBrowserAgain(b *testing.B) {
	root := b.TempDir()
	h := &linuxHome{fs: rootedFS{root}, home: "/home/u", bin: "/opt/fillgate/bin/fillgate", data: "/home/u/.local/share/fillgate",
		env: map[string]string{"HOME": "/home/u", "PATH": "/usr/bin"}}
	if err := os.MkdirAll(h.real(filepath.Dir(h.bin)), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(h.real(h.bin), []byte("#!/bin/sh\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	o := h.opts(namesFor("linux")...)
	_, err := Install(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
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
	if err := os.MkdirAll(h.real(filepath.Dir(h.bin)), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(h.real(h.bin), []byte("#!/bin/sh\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	_, err := Install(context.Background(), h.opts("chrome", "firefox"))
	if err != nil {
		b.Fatal(err)
	}
	o := h.opts()
	o.RuntimeDir = runDir
	for b.Loop() {
		if d := runDoctor(context.Background(), o, doctor.Probes{}); d.ExitCode() != 0 {
			b.Fatal(d.Text())
		}
	}
}
