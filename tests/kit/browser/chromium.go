// Package browser starts real browsers for end-to-end tests: Debian's
// headless Chromium with a throw-away profile (and optionally the unpacked
// extension), reachable over CDP through DevToolsActivePort.
package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fillgate/fillgate/internal/browserproc"
	"github.com/fillgate/fillgate/tests/windows/wine"
)

// ChromiumOptions configures StartChromium.
type ChromiumOptions struct {
	// UserDataDir is the profile directory; empty means a new temp dir.
	UserDataDir string
	// Extensions are unpacked extension directories to load.
	Extensions []string
	// Env is the browser's whole environment (the native host inherits
	// it); nil means a minimal one with HOME and XDG dirs under temp dirs.
	Env []string
	// Args are extra command-line flags.
	Args []string
	// Headed runs without --headless (needs a display).
	Headed bool
	// Undriven starts it with no remote debugging, as a person starts
	// theirs: there is no CDP endpoint then (browserproc.ChromiumOptions).
	Undriven bool
}

// Chromium is a running browser; it is stopped when the test ends.
type Chromium struct {
	*browserproc.Chromium
}

// ChromiumBinary finds Debian's Chromium (or another Chromium-family
// binary). End-to-end tests fail, never skip, when there is none: .ci/run
// installs it.
func ChromiumBinary() (string, error) {
	if p := os.Getenv("FILLGATE_CHROMIUM"); p != "" {
		return p, nil
	}
	bin, err := browserproc.FindChromium()
	if err != nil {
		return "", fmt.Errorf("%w (or set FILLGATE_CHROMIUM)", err)
	}
	return bin, nil
}

// BaseEnv returns a minimal environment for a browser under test with HOME,
// XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_DATA_HOME, XDG_STATE_HOME and
// XDG_RUNTIME_DIR all inside root.
func BaseEnv(root string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(root, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(root, "cache"),
		"XDG_DATA_HOME=" + filepath.Join(root, "data"),
		"XDG_STATE_HOME=" + filepath.Join(root, "state"),
		"XDG_RUNTIME_DIR=" + filepath.Join(root, "run"),
		"LANG=C.UTF-8",
	}
	for _, d := range []string{"home", "config", "cache", "data", "state", "run"} {
		_ = os.MkdirAll(filepath.Join(root, d), 0o700)
	}
	return env
}

// StartChromium launches headless Chromium and waits for its CDP endpoint.
// The browser is killed when the test ends.
func StartChromium(t testing.TB, ctx context.Context, o ChromiumOptions) *Chromium {
	t.Helper()
	wine.Skip(t, "there is no Windows Chromium in the Wine prefix")
	bin, err := ChromiumBinary()
	if err != nil {
		t.Fatal(err)
	}
	if o.UserDataDir == "" {
		o.UserDataDir = t.TempDir()
	}
	if o.Env == nil {
		o.Env = BaseEnv(t.TempDir())
	}
	c, err := browserproc.StartChromium(ctx, browserproc.ChromiumOptions{
		Binary:      bin,
		UserDataDir: o.UserDataDir,
		Extensions:  o.Extensions,
		Env:         o.Env,
		Args:        append([]string{"--no-sandbox", "--disable-quic", "--window-size=1280,900"}, o.Args...),
		Headless:    !o.Headed,
		Undriven:    o.Undriven,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return &Chromium{c}
}
