//go:build !windows

package install

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
)

// The real-browser tests play a new user: Install writes the host manifest
// and unpacks the extension, the extension is loaded from the folder the
// report names, and the browser must then start the binary the manifest
// names. That binary is a script that records its arguments.

// fakeHost writes a host script that records its arguments in started.
func fakeHost(t *testing.T, root string) (host, started string) {
	t.Helper()
	started = filepath.Join(root, "started")
	host = filepath.Join(root, "bin", "fake-fillgate")
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + started + ".tmp && mv " + started + ".tmp " + started + "\nexec cat >/dev/null\n"
	if err := os.WriteFile(host, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return host, started
}

// envLookup turns a KEY=VALUE list into an Env.
func envLookup(env []string) func(string) string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// waitStarted waits for the host's arguments.
func waitStarted(t *testing.T, ctx context.Context, started, manifestPath string, output func() string) []string {
	t.Helper()
	for {
		if b, err := os.ReadFile(started); err == nil {
			return strings.Split(strings.TrimSpace(string(b)), "\n")
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the browser did not start the host named in %s (%v); its output:\n%s", manifestPath, ctx.Err(), output())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func TestRealChromiumStartsTheInstalledHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real browser")
	}
	if _, err := browser.ChromiumBinary(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := t.TempDir()
	host, started := fakeHost(t, root)
	profile := filepath.Join(root, "profile")
	env := browser.BaseEnv(root)

	r, err := Install(ctx, Options{UserDataDir: profile, Binary: host, Env: envLookup(env), DataDir: filepath.Join(root, "data", "fillgate")})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Manifests) != 1 {
		t.Fatalf("r.Manifests has %d items (%v), want %d", len(r.Manifests), r.Manifests, 1)
	}
	if want := filepath.Join(profile, "NativeMessagingHosts", manifest.FileName); r.Manifests[0].Path != want {
		t.Errorf("r.Manifests[0].Path = %v, want %v", r.Manifests[0].Path, want)
	}

	c := browser.StartChromium(t, ctx, browser.ChromiumOptions{UserDataDir: profile, Env: env, Extensions: []string{r.ExtensionDir}})
	args := waitStarted(t, ctx, started, r.Manifests[0].Path, c.Output)
	if args[0] != manifest.ExtensionOrigin {
		t.Errorf("Chromium passes the caller's origin first: got %v, want %v", args[0], manifest.ExtensionOrigin)
	}
}

func TestRealFirefoxStartsTheInstalledHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real browser")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := t.TempDir()
	host, started := fakeHost(t, root)
	env := browser.BaseEnv(root)

	r, err := Install(ctx, Options{Browsers: []string{"firefox"}, Binary: host, Env: envLookup(env), DataDir: filepath.Join(root, "data", "fillgate")})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Manifests) != 1 {
		t.Fatalf("r.Manifests has %d items (%v), want %d", len(r.Manifests), r.Manifests, 1)
	}
	if want := filepath.Join(root, "home", ".mozilla", "native-messaging-hosts", manifest.FileName); r.Manifests[0].Path != want {
		t.Errorf("r.Manifests[0].Path = %v, want %v", r.Manifests[0].Path, want)
	}

	ff := browser.StartFirefox(t, ctx, browser.FirefoxOptions{Env: env})
	var installed struct {
		Extension string `json:"extension"`
	}
	// What "Load Temporary Add-on…" does, over WebDriver BiDi.
	if err := ff.Call(ctx, "webExtension.install", map[string]any{
		"extensionData": map[string]string{"type": "path", "path": r.ExtensionDir},
	}, &installed); err != nil {
		t.Fatal(err)
	}
	if installed.Extension != manifest.FirefoxID {
		t.Errorf("installed.Extension = %v, want %v", installed.Extension, manifest.FirefoxID)
	}

	args := waitStarted(t, ctx, started, r.Manifests[0].Path, ff.Output)
	if len(args) != 2 {
		t.Fatalf("Firefox passes the manifest's path and the add-on id: args has %d items (%v), want %d", len(args), args, 2)
	}
	if args[0] != r.Manifests[0].Path {
		t.Errorf("args[0] = %v, want %v", args[0], r.Manifests[0].Path)
	}
	if args[1] != manifest.FirefoxID {
		t.Errorf("args[1] = %v, want %v", args[1], manifest.FirefoxID)
	}
}
