package demo

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

// chromium is a browser the demo started.
type chromium struct {
	cmd  *exec.Cmd
	ws   string // browser-level CDP endpoint
	out  syncBuffer
	done chan struct{}
}

// syncBuffer collects the browser's output from two pipes.
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

// findChromium looks for a Chromium-family browser the demo can drive.
func findChromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found: install it (Debian/Ubuntu: sudo apt-get install chromium) or pass --browser PATH")
}

// startChromium launches bin with a throw-away profile, the extension
// loaded and a debugging port on 127.0.0.1 that only the demo uses to open
// the login page (and, with --auto, to play the human).
func startChromium(ctx context.Context, bin, profile, extDir string, env []string, headless bool) (*chromium, error) {
	args := []string{
		"--user-data-dir=" + profile,
		"--load-extension=" + extDir,
		"--disable-extensions-except=" + extDir,
		"--disable-features=DisableLoadExtensionCommandLineSwitch",
		"--remote-debugging-port=0",
		"--remote-debugging-address=127.0.0.1",
		"--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--password-store=basic",
		"--window-size=1100,800",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox") // Chromium refuses to run as root with its sandbox
	}
	if headless {
		args = append(args, "--headless=new", "--disable-gpu")
	}
	args = append(args, "about:blank")
	c := &chromium{done: make(chan struct{})}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Env = env
	c.cmd.Stdout = &c.out
	c.cmd.Stderr = &c.out
	setGroup(c.cmd)
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()

	portFile := filepath.Join(profile, "DevToolsActivePort")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		if data, err := os.ReadFile(portFile); err == nil {
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) == 2 {
				c.ws = "ws://127.0.0.1:" + lines[0] + lines[1]
				return c, nil
			}
		}
		select {
		case <-ctx.Done():
			c.stop()
			return nil, ctx.Err()
		case <-c.done:
			return nil, fmt.Errorf("chromium exited at start; its output:\n%s", c.output())
		case <-deadline:
			c.stop()
			return nil, fmt.Errorf("chromium did not open its debugging port in 30 s; its output:\n%s", c.output())
		case <-tick.C:
		}
	}
}

func (c *chromium) output() string { return c.out.String() }

// stop ends the browser (and the native host it started).
func (c *chromium) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	terminate(c.cmd)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		kill(c.cmd)
		<-c.done
	}
}
