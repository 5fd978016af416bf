//go:build linux

package undriven

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/tests/kit/desktop"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// promptName matches the name of both prompts' first window, the page's
// (a popup window of the browser) and the native dialog's: "fillgate —
// password for SERVICE".
const promptName = "^fillgate — password for "

// pagePrompt waits for the page prompt to open in the browser and
// returns its window: a window of the browser's own process, never the
// native dialog's.
func (r *rig) pagePrompt(t testing.TB, ctx context.Context) desktop.Window {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	w, err := r.person.WaitWindow(ctx, promptName)
	if err != nil {
		t.Fatalf("no prompt opened: %v", err)
	}
	if !r.ofBrowser(t, ctx, w) {
		t.Fatalf("the prompt %q opened outside the browser (not the page prompt)", w.Name)
	}
	return w
}

// ofBrowser reports whether window w belongs to the browser's process.
func (r *rig) ofBrowser(t testing.TB, ctx context.Context, w desktop.Window) bool {
	t.Helper()
	pid, err := r.person.PID(ctx, w)
	if err != nil {
		t.Fatalf("whose window is %q: %v", w.Name, err)
	}
	return pid == r.browser.Cmd.Process.Pid
}

// dialog waits for the native dialog (pinentry-gtk-2) to show a window
// whose name matches the regular expression name, and returns it.
func (r *rig) dialog(t testing.TB, ctx context.Context, name string) desktop.Window {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var found desktop.Window
	if err := poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		for _, w := range r.windows(t, ctx, name) {
			if pid, err := r.person.PID(ctx, w); err == nil && isPinentry(pid) {
				found = w
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("no native dialog %q showed within 20 s", name)
	}
	return found
}

// isPinentry reports whether process pid runs pinentry-gtk-2.
func isPinentry(pid int) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && exe == pinentryGTK
}

// browserPrompts lists the browser's prompt windows on the display now.
func (r *rig) browserPrompts(t testing.TB, ctx context.Context) []desktop.Window {
	t.Helper()
	var out []desktop.Window
	for _, w := range r.windows(t, ctx, promptName) {
		if r.ofBrowser(t, ctx, w) {
			out = append(out, w)
		}
	}
	return out
}

// windows lists the visible windows whose name matches pattern now.
func (r *rig) windows(t testing.TB, ctx context.Context, pattern string) []desktop.Window {
	t.Helper()
	out, err := r.xdotool(ctx, "search", "--onlyvisible", "--name", pattern)
	if err != nil {
		return nil // xdotool search fails when nothing matches
	}
	var ws []desktop.Window
	for _, f := range strings.Fields(string(out)) {
		id, err := strconv.ParseUint(f, 10, 32)
		if err != nil {
			t.Fatalf("xdotool search printed %q", out)
		}
		w := desktop.Window{ID: uint32(id)}
		if w.Name, err = r.person.Name(ctx, w); err == nil {
			ws = append(ws, w)
		}
	}
	return ws
}

// focus makes sure the person's keys go to window w. With no window
// manager on the display, a window the browser opens focused does not
// always get the keyboard: then the person gives it the focus, as a click
// on it would (xdotool windowfocus, XSetInputFocus).
func (r *rig) focus(t testing.TB, ctx context.Context, w desktop.Window) {
	t.Helper()
	wait, cancel := context.WithTimeout(ctx, 2*time.Second)
	err := r.person.WaitFocus(wait, w)
	cancel()
	if err == nil {
		return
	}
	t.Logf("window %q did not get the keyboard by itself; the person focuses it", w.Name)
	if _, err := r.xdotool(ctx, "windowfocus", "--sync", strconv.FormatUint(uint64(w.ID), 10)); err != nil {
		if _, gone := r.person.Name(ctx, w); gone != nil {
			t.Fatalf("window %q closed before the person could type in it; the host logged:\n%s", w.Name, r.safe(r.hostLog(t)))
		}
		t.Fatalf("focus %q: %v", w.Name, err)
	}
	wait, cancel = context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := r.person.WaitFocus(wait, w); err != nil {
		t.Fatalf("window %q never got the keyboard: %v", w.Name, err)
	}
}

// types has the person type value into window w, giving it the keyboard
// first.
func (r *rig) types(t testing.TB, ctx context.Context, w desktop.Window, value []byte) {
	t.Helper()
	r.focus(t, ctx, w)
	if err := r.person.Type(ctx, value); err != nil {
		t.Fatalf("the person types: %v", err)
	}
}

// answer has the person type value into window w and press Enter.
func (r *rig) answer(t testing.TB, ctx context.Context, w desktop.Window, value []byte) {
	t.Helper()
	r.types(t, ctx, w, value)
	r.press(t, ctx, w, "Return")
}

// answerInDialog has the person answer the native dialog d with value;
// the keyring is there, so the dialog then offers to remember the value,
// and the person says no.
func (r *rig) answerInDialog(t testing.TB, ctx context.Context, d desktop.Window, value []byte) {
	t.Helper()
	r.answer(t, ctx, d, value)
	r.press(t, ctx, r.dialog(t, ctx, "fillgate — remember the password for "), "Escape")
}

// noBrowserPrompt checks that no page prompt is open in the browser.
func (r *rig) noBrowserPrompt(t testing.TB, ctx context.Context) {
	t.Helper()
	if ws := r.browserPrompts(t, ctx); len(ws) != 0 {
		t.Errorf("a page prompt opened in the browser: %q", ws[0].Name)
	}
}

// press has the person press key in window w.
func (r *rig) press(t testing.TB, ctx context.Context, w desktop.Window, key string) {
	t.Helper()
	r.focus(t, ctx, w)
	if err := r.person.Key(ctx, key); err != nil {
		t.Fatalf("the person presses %s: %v", key, err)
	}
}

// gone waits for window w to close, within limit.
func (r *rig) gone(t testing.TB, ctx context.Context, w desktop.Window, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := r.person.WaitGone(ctx, w); err != nil {
		t.Fatalf("window %q is still open after %v", w.Name, limit)
	}
}

// xdotool runs xdotool on the rig's display.
func (r *rig) xdotool(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "xdotool", args...)
	cmd.Env = append(os.Environ(), r.display.Env()...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("xdotool %s: %v (%s)", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
