package desktop_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/pinentry"
	"github.com/fillgate/fillgate/tests/kit/desktop"
)

// gtk2 is the pinentry these tests show dialogs with.
const gtk2 = "/usr/bin/pinentry-gtk-2"

// needPinentry fails t unless pinentry-gtk-2 is installed.
func needPinentry(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(gtk2); err != nil {
		t.Fatalf("%s is missing: run tests/setup (it installs pinentry-gtk2)", gtk2)
	}
}

// dialog starts pinentry-gtk-2 on d, ended with the test.
func dialog(t *testing.T, d *desktop.Display) *pinentry.Process {
	t.Helper()
	needPinentry(t)
	p, err := pinentry.Start(t.Context(), gtk2, d.Env())
	if err != nil {
		t.Fatalf("start pinentry: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// answer runs fn (the dialog) while person acts, and returns fn's error.
func answer(t *testing.T, fn func() error, person func(ctx context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	if err := person(ctx); err != nil {
		t.Fatalf("the person: %v", err)
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		t.Fatal("the dialog did not end")
		return nil
	}
}

func TestTypeIntoADialog(t *testing.T) {
	d := desktop.Start(t)
	p := dialog(t, d)
	person := d.Person(t)
	typed := []byte("a%b c\"'\\ ~Z9")
	var pin []byte
	err := answer(t, func() (err error) {
		pin, err = p.GetPIN(t.Context(), pinentry.Dialog{Title: "desktop kit: type", Prompt: "Password:"})
		return err
	}, func(ctx context.Context) error {
		w, err := person.WaitWindow(ctx, "^desktop kit: type$")
		if err != nil {
			return err
		}
		if w.Name != "desktop kit: type" {
			t.Errorf("window name %q", w.Name)
		}
		if err := person.WaitFocus(ctx, w); err != nil {
			return err
		}
		if err := person.Type(ctx, typed); err != nil {
			return err
		}
		if err := person.Key(ctx, "Return"); err != nil {
			return err
		}
		return person.WaitGone(ctx, w)
	})
	if err != nil {
		t.Fatalf("GetPIN: %v", err)
	}
	if !bytes.Equal(pin, typed) {
		t.Error("the dialog returned another value than the person typed")
	}
}

// TestCloseIsCancel: Close is a window manager's close button, which
// pinentry takes as Cancel (destroying or killing the window instead
// would crash it).
func TestCloseIsCancel(t *testing.T) {
	d := desktop.Start(t)
	p := dialog(t, d)
	person := d.Person(t)
	err := answer(t, func() error {
		return p.Confirm(t.Context(), pinentry.Dialog{Title: "desktop kit: close", NotOK: "No"})
	}, func(ctx context.Context) error {
		w, err := person.WaitClass(ctx, "[Pp]inentry")
		if err != nil {
			return err
		}
		if w.Name != "desktop kit: close" {
			t.Errorf("window name %q", w.Name)
		}
		if !person.Visible(ctx, "[Pp]inentry") || person.Visible(ctx, "^no such class$") {
			t.Error("Visible does not tell the dialog's window")
		}
		if pid, err := person.PID(ctx, w); err != nil || pid != p.Pid() {
			t.Errorf("window pid %d (%v), want %d", pid, err, p.Pid())
		}
		return person.Close(ctx, w)
	})
	if !errors.Is(err, pinentry.ErrCanceled) {
		t.Errorf("Confirm = %v, want cancelled", err)
	}
}

func TestEscapeAndTab(t *testing.T) {
	d := desktop.Start(t)
	p := dialog(t, d)
	person := d.Person(t)
	err := answer(t, func() error {
		return p.Confirm(t.Context(), pinentry.Dialog{Title: "desktop kit: escape"})
	}, func(ctx context.Context) error {
		if _, err := person.WaitWindow(ctx, "^desktop kit: escape$"); err != nil {
			return err
		}
		return person.Key(ctx, "Escape")
	})
	if !errors.Is(err, pinentry.ErrCanceled) {
		t.Errorf("Confirm after Escape = %v, want cancelled", err)
	}
}

func TestWaitsAreBounded(t *testing.T) {
	d := desktop.Start(t)
	person := d.Person(t)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := person.WaitWindow(ctx, "^no such window$"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitWindow = %v, want the deadline", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("WaitWindow took %v with a 300 ms deadline", took)
	}
}

func TestScreenshot(t *testing.T) {
	d := desktop.Start(t)
	person := d.Person(t)
	path := filepath.Join(t.TempDir(), "screen.png")
	if err := person.Screenshot(t.Context(), path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
		t.Errorf("screenshot is %v, want the 1280x800 screen", b)
	}
}

// TestDisplaysArePrivate: two tests get two displays, and a display is
// gone when its test ends.
func TestDisplaysArePrivate(t *testing.T) {
	var pids []int
	for range 2 {
		t.Run("display", func(t *testing.T) {
			d := desktop.Start(t)
			pids = append(pids, d.PID())
		})
	}
	for _, pid := range pids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			t.Errorf("Xvfb (pid %d) runs on after its test", pid)
		}
	}
	a, b := desktop.Start(t), desktop.Start(t)
	if a.Name == b.Name {
		t.Errorf("two displays at once share %s", a.Name)
	}
}

// TestWaitFocusWhileWindowsComeAndGo: xdotool getwindowfocus fails with
// an X error (BadWindow) when the focused window goes away while it
// looks, as when the dialog before the one waited for has just closed
// (the native-dialog end-to-end test failed once so). WaitFocus looks
// again: windows that take the focus and go never end its wait.
func TestWaitFocusWhileWindowsComeAndGo(t *testing.T) {
	d := desktop.Start(t)
	person := d.Person(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	show := func(title, timeout string) error {
		cmd := exec.CommandContext(ctx, "xmessage", "-title", title, "-timeout", timeout, title)
		cmd.Env = append(os.Environ(), d.Env()...)
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start xmessage: %w", err)
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
	focus := func(w desktop.Window) {
		cmd := exec.CommandContext(ctx, "xdotool", "windowfocus", strconv.FormatUint(uint64(w.ID), 10))
		cmd.Env = append(os.Environ(), d.Env()...)
		_ = cmd.Run() // a churning window may be gone already
	}
	if err := show("fg target", "60"); err != nil {
		t.Fatal(err)
	}
	target, err := person.WaitWindow(ctx, "^fg target$")
	if err != nil {
		t.Fatal(err)
	}
	// For two seconds, windows that live a second take the focus in turn
	// (each goes while it has it); then the target takes it.
	churned := make(chan error, 1)
	last := make(chan struct{}) // closed as the target is given the focus
	go func() {
		defer close(churned)
		for i, end := 0, time.Now().Add(2*time.Second); time.Now().Before(end); i++ {
			title := "fg churn " + strconv.Itoa(i)
			if err := show(title, "1"); err != nil {
				churned <- err
				return
			}
			if w, err := person.WaitWindow(ctx, "^"+title+"$"); err == nil {
				focus(w)
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(1200 * time.Millisecond) // the last churning window goes with the focus
		close(last)
		focus(target)
	}()
	err = person.WaitFocus(ctx, target)
	if cerr := <-churned; cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatalf("WaitFocus while windows come and go: %v", err)
	}
	select {
	case <-last:
	default:
		t.Fatal("WaitFocus returned before the target was given the focus")
	}
}

// TestWaitGoneWhenTheNextDialogHasItsID: the X server gives a new client
// the resource ids of the one that just left, so the dialog that follows
// a closed one (a pinentry each) has the closed one's window ID. Waiting
// for the first to go must not wait for the second (the Remember path of
// the native dialog waited so until its deadline).
func TestWaitGoneWhenTheNextDialogHasItsID(t *testing.T) {
	d := desktop.Start(t)
	person := d.Person(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	show := func(title string) (*pinentry.Process, desktop.Window) {
		p := dialog(t, d)
		done := make(chan error, 1)
		go func() { done <- p.Confirm(ctx, pinentry.Dialog{Title: title}) }()
		t.Cleanup(func() { p.Close(); <-done })
		w, err := person.WaitWindow(ctx, "^"+title+"$")
		if err != nil {
			t.Fatal(err)
		}
		if w.PID != p.Pid() {
			t.Errorf("window %q found with pid %d, want %d", title, w.PID, p.Pid())
		}
		return p, w
	}
	first, w1 := show("desktop kit: first")
	first.Close()
	_, w2 := show("desktop kit: second")
	if w2.ID != w1.ID {
		t.Fatalf("the second dialog's window has ID %d, the first's %d: the case this test is for did not arise", w2.ID, w1.ID)
	}
	gone, cancelGone := context.WithTimeout(ctx, 5*time.Second)
	defer cancelGone()
	if err := person.WaitGone(gone, w1); err != nil {
		t.Errorf("WaitGone(the first dialog) while the second is shown: %v", err)
	}
	if ok, err := person.Exists(ctx, w2); !ok || err != nil {
		t.Errorf("Exists(the second dialog) = %v, %v", ok, err)
	}
}
