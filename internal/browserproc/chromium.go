package browserproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// FindChromium looks for a Chromium-family browser on PATH.
func FindChromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found: install it (Debian/Ubuntu: apt-get install chromium)")
}

// ChromiumOptions configures StartChromium.
type ChromiumOptions struct {
	Binary      string   // the browser; "" means FindChromium
	UserDataDir string   // the profile directory (required)
	Extensions  []string // unpacked extension directories to load
	Env         []string // the browser's whole environment; the native host inherits it
	Args        []string // extra command-line flags
	Headless    bool
	// Undriven starts the browser with no remote debugging at all, as a
	// person starts theirs: no port, no DevToolsActivePort, and so no CDP
	// endpoint (WebSocketURL and Port stay empty). StartChromium then
	// returns once the process runs.
	Undriven bool
}

// Chromium is a running Chromium with a debugging port on 127.0.0.1 (none
// when started Undriven).
type Chromium struct {
	*Proc
	UserDataDir string
	// WebSocketURL is the browser-level CDP endpoint.
	WebSocketURL string
	// Port is the remote debugging port.
	Port int
	out  syncBuffer
}

// StartChromium launches Chromium with the profile in o.UserDataDir, the
// debugging port on 127.0.0.1 (a free one, read back from
// DevToolsActivePort), and none of the background traffic a closed network
// would refuse. It waits, within ctx and at most 30 s, for the endpoint.
func StartChromium(ctx context.Context, o ChromiumOptions) (*Chromium, error) {
	if o.Binary == "" {
		bin, err := FindChromium()
		if err != nil {
			return nil, err
		}
		o.Binary = bin
	}
	args := []string{"--user-data-dir=" + o.UserDataDir}
	if !o.Undriven {
		args = append(args, "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1")
	}
	args = append(args,
		"--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-features=DisableLoadExtensionCommandLineSwitch",
		"--password-store=basic",
	)
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox") // Chromium refuses to run as root with its sandbox
	}
	if o.Headless {
		args = append(args, "--headless=new", "--disable-gpu")
	}
	if len(o.Extensions) > 0 {
		joined := strings.Join(o.Extensions, ",")
		args = append(args, "--load-extension="+joined, "--disable-extensions-except="+joined)
	}
	args = append(append(args, o.Args...), "about:blank")

	// A reused profile still holds the last run's port file.
	portFile := filepath.Join(o.UserDataDir, "DevToolsActivePort")
	if err := os.Remove(portFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove the old DevToolsActivePort: %w", err)
	}
	c := &Chromium{UserDataDir: o.UserDataDir}
	cmd := exec.Command(o.Binary, args...)
	cmd.Env = o.Env
	cmd.Stdout = &c.out
	cmd.Stderr = &c.out
	p, err := StartGroup(cmd)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Binary, err)
	}
	c.Proc = p
	if o.Undriven {
		return c, nil
	}

	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if data, err := os.ReadFile(portFile); err == nil {
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) == 2 {
				if _, err := fmt.Sscanf(lines[0], "%d", &c.Port); err == nil {
					c.WebSocketURL = fmt.Sprintf("ws://127.0.0.1:%d%s", c.Port, lines[1])
					return c, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			c.Stop()
			return nil, fmt.Errorf("chromium did not open its debugging port (%w); its output:\n%s", ctx.Err(), c.Output())
		case <-c.Done():
			c.Stop()
			return nil, fmt.Errorf("chromium exited at start; its output:\n%s", c.Output())
		case <-tick.C:
		}
	}
}

// Stop stops the browser (Proc.Stop) and then removes what it kept
// outside its profile (RemoveSingleton). It is safe to call more than once.
func (c *Chromium) Stop() {
	c.Proc.Stop()
	RemoveSingleton(c.UserDataDir)
}

// Output is what the browser printed so far.
func (c *Chromium) Output() string { return c.out.String() }

// syncBuffer collects output from two pipes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
