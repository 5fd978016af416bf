package nativeprompt_test

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativeprompt"
	"github.com/fillgate/fillgate/tests/kit/desktop"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// gtk2 is the real pinentry these tests show.
const gtk2 = "/usr/bin/pinentry-gtk-2"

// realRig is Debian's pinentry-gtk-2 on a private Xvfb, answered by a person
// with xdotool.
type realRig struct {
	t      *testing.T
	d      *desktop.Display
	person *desktop.Person
	native *nativeprompt.Dialog
	log    *bytes.Buffer
	home   string // the dialog's HOME, scanned for leaks
	tmp    string // the dialog's TMPDIR, scanned for leaks
}

// newReal starts the display and the Dialog.
func newReal(t *testing.T) *realRig {
	t.Helper()
	if _, err := os.Stat(gtk2); err != nil {
		t.Fatalf("%s is missing: run tests/setup (it installs pinentry-gtk2, xvfb, xdotool, x11-utils, imagemagick)", gtk2)
	}
	d := desktop.Start(t)
	r := &realRig{t: t, d: d, person: d.Person(t), log: &bytes.Buffer{}, home: t.TempDir(), tmp: t.TempDir()}
	env := map[string]string{"DISPLAY": d.Name, "HOME": r.home, "TMPDIR": r.tmp, "LANG": "C.UTF-8"}
	r.native = nativeprompt.New(nativeprompt.Config{
		Program: gtk2,
		Env:     func(k string) string { return env[k] },
		Logger:  slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err := r.native.Available(); err != nil {
		t.Fatalf("Available: %v", err)
	}
	return r
}

// outcome is what Ask returned.
type outcome struct {
	a   fill.Answer
	err error
}

// ask runs Ask in the background.
func (r *realRig) ask(ctx context.Context, info fill.PromptInfo) <-chan outcome {
	done := make(chan outcome, 1)
	go func() {
		a, err := r.native.Ask(ctx, info)
		done <- outcome{a, err}
	}()
	return done
}

// wait waits for Ask's outcome.
func (r *realRig) wait(done <-chan outcome) outcome {
	r.t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(30 * time.Second):
		r.t.Fatal("Ask did not return")
		return outcome{}
	}
}

// window waits for the dialog whose title starts with title, and for it
// to have the keyboard.
func (r *realRig) window(ctx context.Context, title string) desktop.Window {
	r.t.Helper()
	w, err := r.person.WaitWindow(ctx, "^"+regexp.QuoteMeta(title))
	if err != nil {
		r.t.Fatalf("no dialog %q: %v", title, err)
	}
	if err := r.person.WaitFocus(ctx, w); err != nil {
		r.t.Fatal(err)
	}
	return w
}

// do fails the test on a person's error.
func (r *realRig) do(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatalf("the person: %v", err)
	}
}

// In pinentry-gtk-2's confirmations the buttons are Cancel, then the
// NotOK button if any, then OK, and Cancel has the focus: Return alone
// cancels, Tab moves to the next button.
var (
	chooseNotOK  = []string{"Tab", "Return"}        // of Cancel, NotOK, OK
	chooseOK3    = []string{"Tab", "Tab", "Return"} // of Cancel, NotOK, OK
	chooseOK2    = []string{"Tab", "Return"}        // of Cancel, OK
	chooseCancel = []string{"Return"}
)

// answered presses keys in w and waits for w to go.
func (r *realRig) answered(ctx context.Context, w desktop.Window, keys ...string) {
	r.t.Helper()
	r.do(r.person.Key(ctx, keys...))
	r.do(r.person.WaitGone(ctx, w))
}

// leaks scans the log and every file the dialogs wrote (their HOME and
// TMPDIR).
func (r *realRig) leaks(secrets ...[]byte) {
	r.t.Helper()
	for _, s := range secrets {
		leakscan.Bytes(r.t, s, "the log", r.log.Bytes())
		leakscan.Dirs(r.t, s, r.home, r.tmp)
	}
}

// processLeaks checks the command line and environment of the pinentry
// that owns w.
func (r *realRig) processLeaks(ctx context.Context, w desktop.Window, secrets ...[]byte) int {
	r.t.Helper()
	pid, err := r.person.PID(ctx, w)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, s := range secrets {
		leakscan.Process(r.t, s, pid)
	}
	return pid
}

// sub is the rig for the subtest t, and a context that ends after d or
// with t.
func (r *realRig) sub(t *testing.T, d time.Duration) (*realRig, context.Context) {
	rr := *r
	rr.t = t
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return &rr, ctx
}

// theInfo is a realistic request.
func theInfo() fill.PromptInfo {
	return fill.PromptInfo{
		Agent:   fill.Agent{Name: "claude", PID: 4121, Via: "fillgate fill"},
		Service: "github.com",
		Origin:  "https://github.com",
		Field:   fill.FieldPassword,
		Via:     fill.ViaExtension,
		Budget:  time.Minute,
		Account: "alice@example.com",
	}
}

// gone waits up to d for pid to exit.
func gone(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("pinentry (pid %d) still runs %v later", pid, d)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRealPinentry: every outcome with the real pinentry-gtk-2, answered
// through the X server as a person would.
func TestRealPinentry(t *testing.T) {
	r := newReal(t)

	t.Run("typed", func(t *testing.T) {
		r, ctx := r.sub(t, 3*time.Minute)
		secret := leakscan.NewSecret(t)
		info := theInfo()
		info.Budget = 2 * time.Minute
		done := r.ask(ctx, info)
		w := r.window(ctx, "fillgate — password for github.com")
		// FILLGATE_SCREENSHOT=docs/native-prompt.png saves the dialog,
		// before anything is typed, for the README.
		if path := os.Getenv("FILLGATE_SCREENSHOT"); path != "" {
			screenshot(t, ctx, r.person, w, path)
		}
		r.do(r.person.Type(ctx, secret))
		r.processLeaks(ctx, w, secret)
		r.answered(ctx, w, "Return")
		o := r.wait(done)
		if o.err != nil || !bytes.Equal(o.a.Value, secret) || o.a.Cancelled || o.a.Remember {
			t.Errorf("Ask: err %v, cancelled %v, remember %v, value as typed %v", o.err, o.a.Cancelled, o.a.Remember, bytes.Equal(o.a.Value, secret))
		}
		o.a.Zero()
		r.leaks(secret)
	})

	// When Remember is offered, a second dialog asks after the value is
	// typed; either answer keeps the value for this fill.
	for _, tc := range []struct {
		name     string
		keys     []string
		remember bool
	}{
		{"typed and remembered", chooseOK2, true},
		{"typed, not remembered", chooseCancel, false}, // Don't remember
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ctx := r.sub(t, 30*time.Second)
			secret := leakscan.NewSecret(t)
			info := theInfo()
			info.Remember = true
			done := r.ask(ctx, info)
			w := r.window(ctx, "fillgate — password for github.com")
			r.do(r.person.Type(ctx, secret))
			r.answered(ctx, w, "Return")
			w = r.window(ctx, "fillgate — remember the password")
			r.processLeaks(ctx, w, secret)
			r.answered(ctx, w, tc.keys...)
			o := r.wait(done)
			if o.err != nil || !bytes.Equal(o.a.Value, secret) || o.a.Remember != tc.remember || o.a.Cancelled {
				t.Errorf("Ask: err %v, remember %v, cancelled %v, value as typed %v", o.err, o.a.Remember, o.a.Cancelled, bytes.Equal(o.a.Value, secret))
			}
			o.a.Zero()
			r.leaks(secret)
		})
	}

	for _, tc := range []struct {
		name  string
		close func(r *realRig, ctx context.Context, w desktop.Window)
	}{
		{"cancel with Escape", func(r *realRig, ctx context.Context, w desktop.Window) { r.answered(ctx, w, "Escape") }},
		{"close the window", func(r *realRig, ctx context.Context, w desktop.Window) {
			r.do(r.person.Close(ctx, w))
			r.do(r.person.WaitGone(ctx, w))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ctx := r.sub(t, 30*time.Second)
			secret := leakscan.NewSecret(t)
			done := r.ask(ctx, theInfo())
			w := r.window(ctx, "fillgate — password for github.com")
			// Typed, then thrown away.
			r.do(r.person.Type(ctx, secret))
			tc.close(r, ctx, w)
			o := r.wait(done)
			if o.err != nil || !o.a.Cancelled || o.a.Value != nil {
				t.Errorf("Ask: err %v, cancelled %v, a value %v", o.err, o.a.Cancelled, o.a.Value != nil)
			}
			r.leaks(secret)
		})
	}

	t.Run("timeout", func(t *testing.T) {
		r, ctx := r.sub(t, 30*time.Second)
		secret := leakscan.NewSecret(t)
		info := theInfo()
		info.Budget = 3 * time.Second
		start := time.Now()
		done := r.ask(ctx, info)
		w := r.window(ctx, "fillgate — password for github.com")
		pid := r.processLeaks(ctx, w)
		r.do(r.person.Type(ctx, secret)) // typed, never sent
		o := r.wait(done)
		if !errors.Is(o.err, context.DeadlineExceeded) || errors.Is(o.err, fill.ErrNoDialog) || o.a.Value != nil {
			t.Errorf("Ask = %v (a value %v), want the deadline", o.err, o.a.Value != nil)
		}
		if took := time.Since(start); took > 6*time.Second {
			t.Errorf("a 3 s budget took %v", took)
		}
		r.do(r.person.WaitGone(ctx, w))
		gone(t, pid, time.Second)
		r.leaks(secret)
	})

	t.Run("the dialog dies with ctx", func(t *testing.T) {
		r, ctx := r.sub(t, 30*time.Second)
		actx, acancel := context.WithCancel(ctx)
		done := r.ask(actx, theInfo())
		w := r.window(ctx, "fillgate — password for github.com")
		pid := r.processLeaks(ctx, w)
		acancel()
		gone(t, pid, time.Second)
		o := r.wait(done)
		if !errors.Is(o.err, context.Canceled) {
			t.Errorf("Ask = %v, want context.Canceled", o.err)
		}
		r.do(r.person.WaitGone(ctx, w))
	})

	t.Run("approve the saved value", func(t *testing.T) {
		r, ctx := r.sub(t, 30*time.Second)
		info := theInfo()
		info.From, info.Entry = "from pass", "from pass: work/github"
		done := r.ask(ctx, info)
		w := r.window(ctx, "fillgate — use the saved password for github.com")
		r.answered(ctx, w, chooseOK3...)
		o := r.wait(done)
		if o.err != nil || !o.a.Approved || o.a.Value != nil || o.a.Cancelled {
			t.Errorf("Ask: err %v, approved %v, cancelled %v, a value %v", o.err, o.a.Approved, o.a.Cancelled, o.a.Value != nil)
		}
	})

	t.Run("approve: account and database password", func(t *testing.T) {
		r, ctx := r.sub(t, 30*time.Second)
		dbPass := leakscan.NewSecret(t)
		info := theInfo()
		info.Account = ""
		info.From, info.Entry = "from KeePassXC", "from KeePassXC: ~/work.kdbx, github"
		info.Accounts = []string{"alice", "bob"}
		info.Ask = "the KeePassXC database password"
		done := r.ask(ctx, info)
		w := r.window(ctx, "fillgate — use the saved password")
		r.answered(ctx, w, chooseOK3...)
		w = r.window(ctx, "fillgate — which account")
		r.answered(ctx, w, chooseNotOK...) // Next account
		w = r.window(ctx, "fillgate — which account")
		r.answered(ctx, w, chooseOK3...) // Use this account
		w = r.window(ctx, "fillgate — unlock the saved password")
		r.do(r.person.Type(ctx, dbPass))
		r.answered(ctx, w, "Return")
		o := r.wait(done)
		if o.err != nil || !o.a.Approved || o.a.Account != "bob" || !bytes.Equal(o.a.Asked, dbPass) {
			t.Errorf("Ask: err %v, approved %v, account %q, database password as typed %v", o.err, o.a.Approved, o.a.Account, bytes.Equal(o.a.Asked, dbPass))
		}
		o.a.Zero()
		r.leaks(dbPass)
	})

	t.Run("type instead", func(t *testing.T) {
		r, ctx := r.sub(t, 30*time.Second)
		secret := leakscan.NewSecret(t)
		info := theInfo()
		info.From, info.Entry = "from pass", "from pass: work/github"
		done := r.ask(ctx, info)
		w := r.window(ctx, "fillgate — use the saved password")
		r.answered(ctx, w, chooseNotOK...) // Type instead
		w = r.window(ctx, "fillgate — password for github.com")
		r.do(r.person.Type(ctx, secret))
		r.answered(ctx, w, "Return")
		o := r.wait(done)
		if o.err != nil || o.a.Approved || !bytes.Equal(o.a.Value, secret) {
			t.Errorf("Ask: err %v, approved %v, value as typed %v", o.err, o.a.Approved, bytes.Equal(o.a.Value, secret))
		}
		o.a.Zero()
		r.leaks(secret)
	})
}

// screenshot saves w (the typed dialog, before anything is typed) to
// path, and checks it is a PNG of a dialog's size.
func screenshot(t *testing.T, ctx context.Context, p *desktop.Person, w desktop.Window, path string) {
	t.Helper()
	if err := p.ScreenshotWindow(ctx, w, path); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", filepath.Base(path), err)
	}
	if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 100 {
		t.Errorf("screenshot is %v: too small for a dialog", b)
	}
}
