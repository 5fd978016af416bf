//go:build unix

package desktop

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Need fails t unless every program is installed, saying how to get it.
func Need(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not installed: run tests/setup (it installs xvfb, xdotool, x11-utils, imagemagick and pinentry-gtk2)", p)
		}
	}
}

// Display is a private X server for one test.
type Display struct {
	// Name is the display, ":N".
	Name string
	cmd  *exec.Cmd
}

// Start starts Xvfb on a display number it picks itself (-displayfd, so
// two tests never race for one), in a process group of its own that the
// kernel kills if the test process dies, and stops it when the test
// ends. It fails t when Xvfb is missing or does not come up in 20 s.
func Start(t testing.TB) *Display {
	t.Helper()
	Need(t, "Xvfb")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// -r: no autorepeat. xdotool presses and releases each key itself, and
	// under load it can be descheduled between the two for longer than the
	// autorepeat delay: the server would then type the key again.
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset", "-r")
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = sysProcAttr()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		t.Fatalf("start Xvfb: %v", err)
	}
	_ = w.Close()
	d := &Display{cmd: cmd}
	t.Cleanup(d.stop)

	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	select {
	case n := <-got:
		if _, err := strconv.Atoi(n); err != nil {
			t.Fatalf("Xvfb did not start (it said: %s)", strings.TrimSpace(stderr.String()))
		}
		d.Name = ":" + n
	case <-time.After(20 * time.Second):
		t.Fatal("Xvfb did not start within 20 s")
	}
	return d
}

// stop ends the server's process group: politely, then by force.
func (d *Display) stop() {
	pid := d.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
}

// PID is the X server's process id.
func (d *Display) PID() int {
	return d.cmd.Process.Pid
}

// Env is what a program needs to draw on the display.
func (d *Display) Env() []string {
	return []string{"DISPLAY=" + d.Name}
}

// Getenv reads Env: DISPLAY is the display, everything else is unset.
// It suits nativeprompt.Config.Env.
func (d *Display) Getenv(key string) string {
	if key == "DISPLAY" {
		return d.Name
	}
	return ""
}

// Person is someone at the display.
type Person struct {
	d *Display
}

// Person returns someone at the display. Fails t unless xdotool and
// ImageMagick's import are installed.
func (d *Display) Person(t testing.TB) *Person {
	t.Helper()
	Need(t, "xdotool", "import", "xwininfo")
	return &Person{d: d}
}

// Window is one window on the display.
type Window struct {
	ID   uint32
	Name string // its name (title) when it was found
	// PID is the process that owned it when it was found (its
	// _NET_WM_PID), 0 when it named none. The X server gives a new client
	// the resource ids of one that just left, so the next dialog's window
	// can have the ID of the one that just closed: Exists and WaitGone
	// tell them apart by PID.
	PID int
}

// run runs an X client program against the display, with input on its
// standard input, and returns what it printed.
func (p *Person) run(ctx context.Context, input []byte, name string, args ...string) ([]byte, error) {
	out, stderr, err := p.runErr(ctx, input, name, args...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", name, args[0], ctx.Err())
		}
		return nil, fmt.Errorf("%s %s: %v (%s)", name, args[0], err, stderr)
	}
	return out, nil
}

// runErr is run that also returns what the program said on its standard
// error, trimmed.
func (p *Person) runErr(ctx context.Context, input []byte, name string, args ...string) (stdout []byte, stderr string, err error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+p.d.Name)
	cmd.SysProcAttr = sysProcAttr()
	if input != nil {
		cmd.Stdin = bytes.NewReader(input)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.Bytes(), strings.TrimSpace(errb.String()), err
}

// search lists the visible windows whose name or class (by is "--name" or
// "--class") matches pattern now, the topmost last as xdotool prints
// them. xdotool exits 1 both when nothing matches and when a window went
// away while it looked at it (an X error, BadWindow, on standard error):
// the first is no window, the second is looked at again, so windows that
// come and go beside the one waited for never end a search.
func (p *Person) search(ctx context.Context, by, pattern string) ([]uint32, error) {
	for {
		out, stderr, err := p.runErr(ctx, nil, "xdotool", "search", "--onlyvisible", by, pattern)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var exit *exec.ExitError
		switch {
		case err == nil:
			var ids []uint32
			for _, f := range strings.Fields(string(out)) {
				id, perr := strconv.ParseUint(f, 10, 32)
				if perr != nil {
					return nil, fmt.Errorf("xdotool search printed %q", out)
				}
				ids = append(ids, uint32(id))
			}
			return ids, nil
		case errors.As(err, &exit) && exit.ExitCode() == 1 && stderr == "":
			return nil, nil
		case strings.Contains(stderr, "BadWindow"):
			continue
		default:
			return nil, fmt.Errorf("xdotool search: %v (%s)", err, stderr)
		}
	}
}

// WaitWindow waits until a visible window whose name matches the regular
// expression pattern is on the display, and returns it (the first, when
// several match).
func (p *Person) WaitWindow(ctx context.Context, pattern string) (Window, error) {
	return p.wait(ctx, "--name", pattern)
}

// WaitClass waits until a visible window whose class matches pattern is
// on the display (pinentry's windows have the class "Pinentry-gtk-2").
func (p *Person) WaitClass(ctx context.Context, pattern string) (Window, error) {
	return p.wait(ctx, "--class", pattern)
}

// WaitDialog waits until a pinentry dialog (fillgate's native dialog) is
// on the display and has the keyboard focus, so that what the person
// types next goes to it, and returns it.
func (p *Person) WaitDialog(ctx context.Context) (Window, error) {
	w, err := p.WaitClass(ctx, "^[Pp]inentry")
	if err == nil {
		err = p.WaitFocus(ctx, w)
	}
	return w, err
}

// TypeInDialog waits (within ctx) for fillgate's native dialog, types
// text in it and presses Return, then waits for it to go (answered).
func (p *Person) TypeInDialog(ctx context.Context, text []byte) error {
	return p.answered(ctx, func(ctx context.Context) error {
		if err := p.Type(ctx, text); err != nil {
			return err
		}
		return p.Key(ctx, "Return")
	})
}

// PressInDialog waits (within ctx) for fillgate's native dialog, presses
// keys in it, then waits for it to go (answered).
func (p *Person) PressInDialog(ctx context.Context, keys ...string) error {
	return p.answered(ctx, func(ctx context.Context) error { return p.Key(ctx, keys...) })
}

// answered waits for the native dialog, answers it and waits, at most
// 30 s, for it to go: not within ctx, as what opened the dialog may end,
// and ctx with it, as soon as the person answers, and the dialog goes
// before it ends.
func (p *Person) answered(ctx context.Context, answer func(context.Context) error) error {
	w, err := p.WaitDialog(ctx)
	if err != nil {
		return fmt.Errorf("no native dialog: %w", err)
	}
	if err := answer(ctx); err != nil {
		return err
	}
	gone, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return p.WaitGone(gone, w)
}

// Visible reports whether a visible window whose class matches pattern
// is on the display now, without waiting (false also when ctx ended).
func (p *Person) Visible(ctx context.Context, pattern string) bool {
	ids, err := p.search(ctx, "--class", pattern)
	return err == nil && len(ids) > 0
}

// wait looks for a visible window matching pattern every 25 ms until
// one is there and can be named, and returns the first xdotool lists.
func (p *Person) wait(ctx context.Context, by, pattern string) (Window, error) {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		ids, err := p.search(ctx, by, pattern)
		if err != nil {
			return Window{}, fmt.Errorf("waiting for a window %s %q: %w", by, pattern, err)
		}
		if len(ids) > 0 {
			w := Window{ID: ids[0]}
			name, err := p.Name(ctx, w)
			if err == nil {
				w.Name = name
				w.PID, err = p.owner(ctx, w)
			}
			if err == nil {
				return w, nil
			}
			if ctx.Err() != nil {
				return Window{}, fmt.Errorf("waiting for a window %s %q: %w", by, pattern, ctx.Err())
			}
			// It went away before it could be named: look again.
		}
		select {
		case <-ctx.Done():
			return Window{}, fmt.Errorf("waiting for a window %s %q: %w", by, pattern, ctx.Err())
		case <-tick.C:
		}
	}
}

// Name reads a window's name (title) now.
func (p *Person) Name(ctx context.Context, w Window) (string, error) {
	out, err := p.run(ctx, nil, "xdotool", "getwindowname", w.id())
	return strings.TrimSuffix(string(out), "\n"), err
}

// PID is the process that owns a window, as it says (_NET_WM_PID).
func (p *Person) PID(ctx context.Context, w Window) (int, error) {
	out, err := p.run(ctx, nil, "xdotool", "getwindowpid", w.id())
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// errNoWindow is owner's error for a window that is not on the display.
var errNoWindow = errors.New("no such window")

// owner is the process that owns a window now, as it says (_NET_WM_PID):
// 0 when it names none, errNoWindow when the window is not there.
func (p *Person) owner(ctx context.Context, w Window) (int, error) {
	out, stderr, err := p.runErr(ctx, nil, "xdotool", "getwindowpid", w.id())
	switch {
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case err == nil:
		pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			return 0, fmt.Errorf("xdotool getwindowpid printed %q", out)
		}
		return pid, nil
	case strings.Contains(stderr, "BadWindow"):
		return 0, errNoWindow
	case strings.Contains(stderr, "no pid"):
		return 0, nil
	}
	return 0, fmt.Errorf("xdotool getwindowpid: %v (%s)", err, stderr)
}

// Exists reports whether a window is still on the display: its ID names
// a window, and one of the same process when w has a PID (not the next
// dialog's window, which may have been given the same ID).
func (p *Person) Exists(ctx context.Context, w Window) (bool, error) {
	if w.PID != 0 {
		pid, err := p.owner(ctx, w)
		if errors.Is(err, errNoWindow) {
			return false, nil
		}
		return err == nil && pid == w.PID, err
	}
	_, err := p.run(ctx, nil, "xwininfo", "-id", w.id())
	if err == nil {
		return true, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return false, nil
}

// WaitGone waits until a window is no longer on the display (Exists).
func (p *Person) WaitGone(ctx context.Context, w Window) error {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := p.Exists(ctx, w)
		if err != nil {
			return fmt.Errorf("waiting for window %d to go: %w", w.ID, err)
		}
		if !ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for window %d to go: %w", w.ID, ctx.Err())
		case <-tick.C:
		}
	}
}

// WaitFocus waits until a window has the keyboard focus, so that what
// the person types next goes to it. xdotool getwindowfocus walks up from
// the focused window to its top-level one; when that window goes away
// while it walks (the focus is moving: a dialog just closed), it fails
// with an X error, BadWindow, and the focus is looked at again.
func (p *Person) WaitFocus(ctx context.Context, w Window) error {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		out, stderr, err := p.runErr(ctx, nil, "xdotool", "getwindowfocus")
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("waiting for window %d to have the focus: %w", w.ID, ctx.Err())
		case err != nil && !strings.Contains(stderr, "BadWindow"):
			return fmt.Errorf("waiting for window %d to have the focus: xdotool getwindowfocus: %v (%s)", w.ID, err, stderr)
		case err == nil && strings.TrimSpace(string(out)) == w.id():
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for window %d to have the focus: %w", w.ID, ctx.Err())
		case <-tick.C:
		}
	}
}

// Type types text with the keyboard, a key every 15 ms, into the window
// that has the keyboard. text goes to xdotool on its standard input.
// Keep to what a US keyboard has: xdotool types any other character by
// remapping a spare key for a moment, which applications can miss.
func (p *Person) Type(ctx context.Context, text []byte) error {
	_, err := p.run(ctx, text, "xdotool", "type", "--delay", "15", "--file", "-")
	return err
}

// Key presses keys, one after the other ("Return", "Escape", "Tab",
// "shift+Tab").
func (p *Person) Key(ctx context.Context, keys ...string) error {
	_, err := p.run(ctx, nil, "xdotool", append([]string{"key", "--delay", "30"}, keys...)...)
	return err
}

// Close asks a window to close, as a window manager does when the person
// clicks its close button: a WM_DELETE_WINDOW message (no window is
// destroyed or killed).
func (p *Person) Close(ctx context.Context, w Window) error {
	return sendDeleteWindow(ctx, p.d.Name, w.ID)
}

// Screenshot saves the whole screen as a PNG.
func (p *Person) Screenshot(ctx context.Context, path string) error {
	return p.screenshot(ctx, "root", path)
}

// ScreenshotWindow saves one window as a PNG.
func (p *Person) ScreenshotWindow(ctx context.Context, w Window, path string) error {
	return p.screenshot(ctx, w.id(), path)
}

// screenshot is import -window which.
func (p *Person) screenshot(ctx context.Context, which, path string) error {
	if !strings.HasSuffix(path, ".png") {
		return errors.New("screenshots are PNG files: name one .png")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	_, err := p.run(ctx, nil, "import", "-window", which, path)
	return err
}

// id is the window's id as xdotool takes it.
func (w Window) id() string {
	return strconv.FormatUint(uint64(w.ID), 10)
}
