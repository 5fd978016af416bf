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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, os.MkdirAll(filepath.Dir(host), 0o755))
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + started + ".tmp && mv " + started + ".tmp " + started + "\nexec cat >/dev/null\n"
	require.NoError(t, os.WriteFile(host, []byte(script), 0o755))
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
	require.NoError(t, err)
	require.Len(t, r.Manifests, 1)
	assert.Equal(t, filepath.Join(profile, "NativeMessagingHosts", manifest.FileName), r.Manifests[0].Path)

	c := browser.StartChromium(t, ctx, browser.ChromiumOptions{UserDataDir: profile, Env: env, Extensions: []string{r.ExtensionDir}})
	args := waitStarted(t, ctx, started, r.Manifests[0].Path, c.Output)
	assert.Equal(t, manifest.ExtensionOrigin, args[0], "Chromium passes the caller's origin first")
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
	require.NoError(t, err)
	require.Len(t, r.Manifests, 1)
	assert.Equal(t, filepath.Join(root, "home", ".mozilla", "native-messaging-hosts", manifest.FileName), r.Manifests[0].Path)

	ff := browser.StartFirefox(t, ctx, browser.FirefoxOptions{Env: env})
	var installed struct {
		Extension string `json:"extension"`
	}
	// What "Load Temporary Add-on…" does, over WebDriver BiDi.
	require.NoError(t, ff.Call(ctx, "webExtension.install", map[string]any{
		"extensionData": map[string]string{"type": "path", "path": r.ExtensionDir},
	}, &installed))
	assert.Equal(t, manifest.FirefoxID, installed.Extension)

	args := waitStarted(t, ctx, started, r.Manifests[0].Path, ff.Output)
	require.Len(t, args, 2, "Firefox passes the manifest's path and the add-on id")
	assert.Equal(t, r.Manifests[0].Path, args[0])
	assert.Equal(t, manifest.FirefoxID, args[1])
}
