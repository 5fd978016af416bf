//go:build linux

package agents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/fakes/notifyd"
	"github.com/fillgate/fillgate/tests/kit/desktop"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/loopback"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

// gtk2 is the pinentry the person answers in: the attack rig's policy
// names it, so that the dialog is the same on every machine (the one
// fillgate would pick by itself depends on what else is installed).
const gtk2 = "/usr/bin/pinentry-gtk-2"

// attackPolicy is the policy of the attacker tests: many requests, no
// cool-down, a short budget (a wrong turn fails in seconds, not in 90),
// the person's own pinentry, and no prompt key: the person's default,
// prompt = "auto". prompt_opener = "cdp-tab" makes any page prompt the
// CDP path opened a tab of the browser, where the test would see it.
// Top-level keys (top) come before the tables; 127.0.0.1 never offers to
// remember a typed value (one dialog per typed fill).
func attackPolicy(pinentry, top, tables string) string {
	return fmt.Sprintf(`# fillgate attacker tests: the person's default prompt ("auto")
rate_limit = "1000/1m"
no_response_cooldown = "0s"
prompt_opener = "cdp-tab"
prompt_budget = "45s"
pinentry = %q
%s
[service."127.0.0.1"]
remember = false
%s`, pinentry, top, tables)
}

// attackRig is a rig (rig_test.go) for the attacker tests, built as
// newRig builds one with three more things in the environment that the
// browser, its host and `fillgate fill` share: a private X display (the
// native dialog shows there, and a Person answers it), and a private
// session bus with a real gnome-keyring and a notification service (the
// saved values, and the CDP path's notices of fills with no prompt).
// Its login sites record what they receive.
type attackRig struct {
	*rig
	display *desktop.Display
	person  *desktop.Person
	login1  *loginSite // r.site1, 127.0.0.1
	login2  *loginSite // r.site2, 127.0.0.2
	notices *notifyd.Daemon
}

// newAttackRig starts it all. secretservice points this process at its
// bus with t.Setenv, so t must not be parallel.
func newAttackRig(t *testing.T, ctx context.Context) *attackRig {
	t.Helper()
	if _, err := os.Stat(gtk2); err != nil {
		t.Fatalf("%s is missing: run tests/setup (it installs pinentry-gtk2, xvfb, xdotool, x11-utils, imagemagick)", gtk2)
	}
	a := &attackRig{}
	// Cleanups run last-first: this runs after everything below stopped.
	t.Cleanup(a.nothingOutlives)
	a.rig = newBareRig(t, ctx, "fgat-")
	r := a.rig
	a.display = desktop.Start(t)
	a.person = a.display.Person(t)
	secretservice.Start(t)
	a.notices = notifyd.Start(t)
	r.env = append(r.env, a.display.Env()...)
	r.env = append(r.env, "DBUS_SESSION_BUS_ADDRESS="+os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	r.writePolicy(attackPolicy(gtk2, "", ""))
	a.login1, a.login2 = serveLogin(t, "127.0.0.1"), serveLogin(t, "127.0.0.2")
	r.start(a.login1.site, a.login2.site)
	return a
}

// remember stores secret as the saved password of service, as the person
// does (`fillgate remember --stdin`: the value on standard input only).
func (a *attackRig) remember(t testing.TB, service string, secret []byte) {
	t.Helper()
	cmd := exec.CommandContext(a.ctx, fillgateBin, "remember", "--service", service, "--stdin")
	cmd.Env = a.env
	in := append(bytes.Clone(secret), '\n')
	defer clear(in)
	cmd.Stdin = bytes.NewReader(in)
	out, errOut, code := fgrun.Command(t, cmd)
	a.Keep(out, errOut)
	if code != 0 {
		t.Fatalf("fillgate remember exited %d: %s", code, a.Withheld(errOut))
	}
}

// nothingOutlives checks, once every cleanup before it ran, that no
// process of the rig is left: no pinentry, browser, host or fillgate
// (each has the rig's HOME in its environment; a display number can be
// another test's by now).
func (a *attackRig) nothingOutlives() {
	mark := []byte("\x00HOME=" + filepath.Join(a.root, "home") + "\x00")
	left := func() []string {
		var out []string
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil || !bytes.Contains(append([]byte{0}, env...), mark) {
				continue
			}
			exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
			out = append(out, fmt.Sprintf("%d (%s)", pid, exe))
		}
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		l := left()
		if len(l) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			a.t.Errorf("processes outlived the test: %s", strings.Join(l, ", "))
			return
		case <-tick.C:
		}
	}
}

// loginSite is a login site (the rig's pages) that records the password
// or code of every login posted to it. It is compared, never printed.
type loginSite struct {
	site    *site
	mu      sync.Mutex
	got     [][]byte
	changed chan struct{} // closed and replaced at every login
}

// serveLogin starts a recording login site on ip until the test ends.
func serveLogin(t testing.TB, ip string) *loginSite {
	t.Helper()
	l := &loginSite{changed: make(chan struct{})}
	inner := pages()
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost && req.ParseForm() == nil {
			l.mu.Lock()
			l.got = append(l.got, []byte(req.PostForm.Get("pw")+req.PostForm.Get("otp")))
			close(l.changed)
			l.changed = make(chan struct{})
			l.mu.Unlock()
		}
		inner.ServeHTTP(w, req)
	})
	// Runs once the server has closed (cleanups run last-first).
	t.Cleanup(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, g := range l.got {
			clear(g)
		}
	})
	l.site = &site{origin: loopback.Start(t, ip, h)}
	return l
}

// count is how many logins were posted so far.
func (l *loginSite) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got)
}

// gotOnly waits (a result may come back while the login's request is
// still on its way) until a login was posted since the site had n, and
// reports whether exactly one was, holding exactly want.
func (l *loginSite) gotOnly(ctx context.Context, n int, want []byte) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		l.mu.Lock()
		got, changed := l.got, l.changed
		l.mu.Unlock()
		if len(got) > n {
			return len(got) == n+1 && bytes.Equal(got[n], want)
		}
		select {
		case <-ctx.Done():
			return false
		case <-changed:
		}
	}
}

// awaitDialog waits for fillgate's native dialog (a pinentry window) to
// show while run is pending, checks that its title starts with title and
// that fillgate runs it (its parent is parent), and waits for it to have
// the keyboard.
func (a *attackRig) awaitDialog(t testing.TB, run *fillRun, title string, parent int) desktop.Window {
	t.Helper()
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	go func() {
		select {
		case <-run.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	w, err := a.person.WaitClass(ctx, "^[Pp]inentry")
	if err != nil {
		select {
		case <-run.Done():
			t.Fatalf("the request ended before a native dialog showed: %+v", run.result(t))
		default:
		}
		t.Fatalf("no native dialog: %v", err)
	}
	if !strings.HasPrefix(w.Name, title) {
		t.Errorf("the native dialog's title is %q; want it to start with %q", w.Name, title)
	}
	pid, err := a.person.PID(ctx, w)
	if err != nil {
		t.Fatalf("the dialog's process: %v", err)
	}
	if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe != gtk2 {
		t.Errorf("the dialog runs %q; want %s", exe, gtk2)
	}
	if pp := parentOf(pid); pp != parent {
		t.Errorf("the dialog's parent is process %d; want fillgate's %d", pp, parent)
	}
	if err := a.person.WaitFocus(ctx, w); err != nil {
		t.Fatal(err)
	}
	return w
}

// answer has the person press keys in the dialog w and waits for it to
// go.
func (a *attackRig) answer(t testing.TB, w desktop.Window, keys ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(a.ctx, 20*time.Second)
	defer cancel()
	if err := a.person.Key(ctx, keys...); err != nil {
		t.Fatalf("the person: %v", err)
	}
	if err := a.person.WaitGone(ctx, w); err != nil {
		t.Fatalf("the person answered, the dialog stayed: %v", err)
	}
}

// typeIn has the person type secret into the dialog w, once it has the
// keyboard (the secret goes to xdotool on its standard input).
func (a *attackRig) typeIn(t testing.TB, w desktop.Window, secret []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(a.ctx, 20*time.Second)
	defer cancel()
	if err := a.person.WaitFocus(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := a.person.Type(ctx, secret); err != nil {
		t.Fatal("the person could not type into the dialog")
	}
}

// whileOpen is ctx, ended also when done closes.
func whileOpen(ctx context.Context, done <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// noDialogUntil fails t, saying why it should not have, if a native
// dialog shows before done closes (a fill that needs no person, or one
// the person already answered). A dialog that shows is cancelled, so the
// request ends at once.
func (a *attackRig) noDialogUntil(t testing.TB, done <-chan struct{}, why string) {
	t.Helper()
	ctx, cancel := whileOpen(a.ctx, done)
	defer cancel()
	w, err := a.person.WaitClass(ctx, "^[Pp]inentry")
	if err == nil {
		t.Errorf("a native dialog (%q) showed: %s", w.Name, why)
		_ = a.person.Key(a.ctx, "Escape")
	} else if !errors.Is(err, context.Canceled) {
		t.Errorf("watching for a dialog: %v", err)
	}
}

// parentOf is process pid's parent, or 0.
func parentOf(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// ready puts the person's login tab tb on its login page (again), in
// front, with its password field focused; tb now reports to t.
func ready(t testing.TB, tb *tab) {
	t.Helper()
	tb.t = t
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	// A login a fill submitted may still be on its way: stop it first.
	_, _ = chromedp.Call(ctx, page.StopLoading, cdp.Empty{})
	if err := chromedp.Do(ctx, chromedp.Navigate(tb.url)); err != nil {
		t.Fatalf("open the login page again: %v", err)
	}
	if !pageIs(t, tb, `location.pathname === "/login" && !!document.getElementById("pw")`) {
		t.Fatalf("the login page did not load")
	}
	tb.front()
	tb.focus("pw")
}

// pageIs waits until tb's page is loaded and the JavaScript expression
// cond holds there; a page between two documents is waited out.
func pageIs(t testing.TB, tb *tab, cond string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 15*time.Second)
	defer cancel()
	return poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		return chromedp.Run(ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && (`+cond+`)`))
	}) == nil
}

// fieldEmpty reports whether tb's password field, once its page has
// loaded, is empty. (tab.holds cannot say it: an empty string argument
// is dropped on its way to the page, by omitempty in cdproto's
// CallArgument.)
func fieldEmpty(t testing.TB, tb *tab) bool {
	t.Helper()
	if !pageIs(t, tb, `!!document.getElementById("pw")`) {
		t.Fatalf("the page has no password field")
	}
	empty, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](`document.getElementById("pw").value === ""`))
	if err != nil {
		t.Fatalf("read the field: %v", err)
	}
	return empty
}

// welcome waits for tb to be the welcome page its login went to.
func welcome(t testing.TB, tb *tab) {
	t.Helper()
	if !pageIs(t, tb, `location.pathname === "/welcome"`) {
		t.Fatalf("the login did not land on the welcome page")
	}
}

// logTail logs the end of fillgate's log (it never holds a value; each
// line is withheld if it held a secret anyway), for a failure.
func (a *attackRig) logTail(t testing.TB) {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(a.stateDir, "fillgate.log"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for _, l := range lines[max(0, len(lines)-30):] {
		t.Logf("fillgate.log: %s", a.Withheld([]byte(l)))
	}
}
