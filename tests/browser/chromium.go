// Package browser starts real browsers for end-to-end tests: Debian's
// headless Chromium with a throw-away profile (and optionally the unpacked
// extension), reachable over CDP through DevToolsActivePort.
package browser

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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
}

// Chromium is a running browser.
type Chromium struct {
	Cmd         *exec.Cmd
	UserDataDir string
	// WebSocketURL is the browser-level CDP endpoint.
	WebSocketURL string
	// Port is the remote debugging port.
	Port int

	mu     sync.Mutex
	stderr bytes.Buffer
}

// ChromiumBinary finds Debian's Chromium (or another Chromium-family
// binary). End-to-end tests fail, never skip, when there is none: .ci/run
// installs it.
func ChromiumBinary() (string, error) {
	if p := os.Getenv("FILLGATE_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium found: run apt-get install -y chromium (or set FILLGATE_CHROMIUM)")
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
	args := []string{
		"--no-sandbox",
		"--disable-gpu",
		"--disable-quic",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-features=DisableLoadExtensionCommandLineSwitch",
		"--password-store=basic",
		"--remote-debugging-port=0",
		"--remote-debugging-address=127.0.0.1",
		"--user-data-dir=" + o.UserDataDir,
		"--window-size=1280,900",
	}
	if !o.Headed {
		args = append(args, "--headless=new")
	}
	if len(o.Extensions) > 0 {
		joined := strings.Join(o.Extensions, ",")
		args = append(args, "--load-extension="+joined, "--disable-extensions-except="+joined)
	}
	args = append(args, o.Args...)
	args = append(args, "about:blank")

	// A reused profile still holds the last run's port file.
	portFile := filepath.Join(o.UserDataDir, "DevToolsActivePort")
	if err := os.Remove(portFile); err != nil && !os.IsNotExist(err) {
		t.Fatalf("remove the old DevToolsActivePort: %v", err)
	}
	c := &Chromium{UserDataDir: o.UserDataDir}
	cmd := exec.Command(bin, args...)
	cmd.Env = o.Env
	cmd.Stdout = &lockedWriter{c: c}
	cmd.Stderr = &lockedWriter{c: c}
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	c.Cmd = cmd
	t.Cleanup(c.Stop)

	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		data, err := os.ReadFile(portFile)
		if err == nil {
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) == 2 {
				if _, err := fmt.Sscanf(lines[0], "%d", &c.Port); err == nil {
					c.WebSocketURL = fmt.Sprintf("ws://127.0.0.1:%d%s", c.Port, lines[1])
					return c
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("chromium did not write DevToolsActivePort (%v); its output:\n%s", ctx.Err(), c.Output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Output is what the browser printed so far.
func (c *Chromium) Output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// Stop kills the browser and its child processes (the native host among
// them) and waits for it.
func (c *Chromium) Stop() {
	if c.Cmd == nil || c.Cmd.Process == nil {
		return
	}
	signalGroup(c.Cmd, false)
	done := make(chan struct{})
	go func() { _ = c.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		signalGroup(c.Cmd, true)
		<-done
	}
	c.Cmd = nil
}

type lockedWriter struct{ c *Chromium }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.stderr.Write(p)
}
