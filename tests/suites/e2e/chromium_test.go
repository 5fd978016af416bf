//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// chromium is one headless Chromium with the extension that `fillgate
// install` unpacked, the host it started from the manifest install wrote,
// and the login pages on two loopback origins.
type chromium struct {
	*rig
	ctx     context.Context
	browser *browser.Chromium
	bctx    context.Context // the test's own CDP connection: it plays the user
	origin1 string          // http://127.0.0.1:port
	origin2 string          // http://127.0.0.2:port, another site
	// lookalike is origin1's server under the name
	// http://github.com.localhost:port, which Chromium resolves to
	// loopback itself.
	lookalike string
	host      agentsock.HostStatus // the host as it was at the start
	prompts   *promptWatch
	secrets   [][]byte // every scenario's secret, for the final scan
}

// startChromium sets everything up. Stop it with finish, which also runs
// the leak scans that need the browser's files flushed.
func startChromium(t testing.TB, ctx context.Context) *chromium {
	t.Helper()
	ch := startChromiumIn(t, ctx, newRig(t), "profile")
	ch.doctor(t)
	return ch
}

// startChromiumIn starts a Chromium with the profile dir name in the rig r,
// which other browsers may share (one agent socket dir for all).
func startChromiumIn(t testing.TB, ctx context.Context, r *rig, name string) *chromium {
	t.Helper()
	profile := filepath.Join(r.root, name)
	r.install(t, ctx, filepath.Join(profile, "NativeMessagingHosts"),
		"--browser", "chromium", "--user-data-dir", profile)

	ch := &chromium{rig: r, ctx: ctx}
	l1, o1 := listen(t, "127.0.0.1")
	l2, o2 := listen(t, "127.0.0.2")
	ch.origin1, ch.origin2 = o1, o2
	ch.lookalike = strings.Replace(o1, "127.0.0.1", "github.com.localhost", 1)
	startServer(t, l1, loginPages(o2))
	startServer(t, l2, loginPages(o1))

	ch.browser = browser.StartChromium(t, ctx, browser.ChromiumOptions{
		UserDataDir: profile,
		Extensions:  []string{r.extensionDir},
		Env:         r.env,
	})
	ch.bctx = ch.browser.Attach(t, ctx)
	ch.prompts = watchPrompts(t, ch.bctx, func(url string) bool {
		return strings.HasPrefix(url, "http://127.0.0.1:") && !strings.HasPrefix(url, o1+"/")
	})

	ch.host = r.waitHostOf(t, ctx, ch.browser.Cmd.Process.Pid)
	if ch.host.Browser != "chromium" || ch.host.BrowserName != "chromium" || ch.host.Profile != profile ||
		ch.host.Caller != manifest.ExtensionOrigin || ch.host.Extension.Paused || ch.host.Extension.Instance == "" {
		t.Fatalf("host status %+v; want chromium with profile %s, called by %s, not paused, with an instance id", ch.host, profile, manifest.ExtensionOrigin)
	}
	r.checkHostProcess(t, ch.host, ch.browser.Cmd.Process.Pid)
	return ch
}

// doctor runs `fillgate doctor --json` as a person would and checks that
// it sees the manifest and the running host with the extension connected.
func (ch *chromium) doctor(t testing.TB) {
	t.Helper()
	out, errOut, _ := ch.cli(t, ch.ctx, "doctor", "--json", "--browser", "chromium", "--user-data-dir", ch.browser.UserDataDir)
	var rep struct {
		Checks []struct{ Name, Status, Detail string } `json:"checks"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("fillgate doctor --json printed %s%s: %v", out, errOut, err)
	}
	hostCheck := fmt.Sprintf("host %d", ch.host.PID)
	want := map[string]bool{"chromium": false, hostCheck: false, "extension": false}
	for _, c := range rep.Checks {
		if _, ok := want[c.Name]; ok {
			want[c.Name] = c.Status == "ok"
		}
	}
	for name, ok := range want {
		if !ok {
			t.Errorf("fillgate doctor's %s check is not ok: %s", name, out)
		}
	}
}

// finish stops the browser (which flushes its profile), checks that the
// host exited with it, and scans the browser's output and every file
// under the temp root (the profile, HOME and the XDG dirs) for every
// scenario's secret.
func (ch *chromium) finish(t testing.TB) {
	t.Helper()
	ch.browser.Stop()
	waitGone(t, ch.ctx, ch.host.PID, "the host")
	for _, secret := range ch.secrets {
		leakscan.Bytes(t, secret, "the browser's output", []byte(ch.browser.Output()))
		if n := leakscan.Dirs(t, secret, ch.root); n < 20 {
			t.Errorf("the leak scan read only %d files under %s", n, ch.root)
		}
		clear(secret)
	}
}

// secret makes the random secret of one scenario; finish scans for it.
func (ch *chromium) secret(t testing.TB) []byte {
	s := leakscan.NewSecret(t)
	ch.secrets = append(ch.secrets, s)
	return s
}

// tab is a page the user has open, driven over the test's own CDP session.
type tab struct {
	t   testing.TB
	ctx context.Context
}

// open opens url in a new tab in front; the tab closes when the test ends.
func (ch *chromium) open(t testing.TB, url string) tab {
	t.Helper()
	return tab{t: t, ctx: browser.NewTab(t, ch.bctx, url)}
}

// eval evaluates a boolean expression in the page's own world.
func (tb tab) eval(expr string) bool {
	tb.t.Helper()
	ok, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %q: %v", expr, err)
	}
	return ok
}

// holds reports whether fn, a function declaration run in the page's own
// world, returns true for the secret. The comparison happens in the page;
// only the boolean comes back.
func (tb tab) holds(fn string, secret []byte) bool {
	tb.t.Helper()
	return callWith(tb.t, tb.ctx, fn, string(secret))
}

// callWith calls the function declaration fn with args on the page's
// window and returns its boolean result. An error never quotes the
// arguments.
func callWith(t testing.TB, ctx context.Context, fn string, args ...any) bool {
	t.Helper()
	win, err := chromedp.Run(ctx, chromedp.Evaluate[*runtime.RemoteObject]("window"))
	if err != nil {
		t.Fatalf("the page's window: %v", err)
	}
	ok, err := chromedp.Run(ctx, chromedp.CallFunctionOn[bool](fn, func(p *runtime.CallFunctionOnParams) {
		p.ObjectID = win.ObjectID
	}, args...))
	if err != nil {
		t.Fatalf("compare in the page failed")
	}
	return ok
}

// focus focuses the element expr evaluates to, as a click into it would.
func (tb tab) focus(expr string) {
	tb.t.Helper()
	if !tb.eval(`(() => { const el = ` + expr + `; el.focus(); return el.getRootNode().activeElement === el; })()`) {
		tb.t.Fatalf("could not focus %s", expr)
	}
}

// click clicks the left mouse button at (x, y) of the viewport.
func click(t testing.TB, ctx context.Context, x, y float64) {
	t.Helper()
	for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
		if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{
			Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1,
		}); err != nil {
			t.Fatalf("click at %v,%v: %v", x, y, err)
		}
	}
}

// frame attaches to the out-of-process iframe whose URL starts with
// prefix (a frame from another site).
func (ch *chromium) frame(t testing.TB, prefix string) tab {
	t.Helper()
	info, err := browser.WaitTarget(ch.ctx, ch.bctx, "iframe", prefix)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := chromedp.NewContext(ch.bctx, chromedp.WithTargetID(info.TargetID), chromedp.WithDetachOnCancel())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("attach to the frame: %v", err)
	}
	return tab{t: t, ctx: ctx}
}

// promptWatch records every prompt page the browser opens (a page target
// on a 127.0.0.1 origin that is not a login page), from the browser's
// target events, and which of them closed.
type promptWatch struct {
	mu       sync.Mutex
	isPrompt func(url string) bool
	opened   []target.ID
	openedAt map[target.ID]time.Time // when the browser reported it
	known    map[target.ID]bool
	closed   map[target.ID]bool
	changed  chan struct{} // closed and replaced on every change
}

func watchPrompts(t testing.TB, bctx context.Context, isPrompt func(string) bool) *promptWatch {
	t.Helper()
	w := &promptWatch{isPrompt: isPrompt, openedAt: map[target.ID]time.Time{}, known: map[target.ID]bool{},
		closed: map[target.ID]bool{}, changed: make(chan struct{})}
	if err := chromedp.ListenBrowser(bctx, w.event); err != nil {
		t.Fatalf("listen to the browser's targets: %v", err)
	}
	if _, err := chromedp.CallBrowser(bctx, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		t.Fatalf("discover targets: %v", err)
	}
	return w
}

func (w *promptWatch) event(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev := ev.(type) {
	case *target.EventTargetCreated:
		w.saw(ev.TargetInfo)
	case *target.EventTargetInfoChanged:
		w.saw(ev.TargetInfo)
	case *target.EventTargetDestroyed:
		if w.known[ev.TargetID] {
			w.closed[ev.TargetID] = true
			w.notify()
		}
	}
}

// saw must be called with w.mu held.
func (w *promptWatch) saw(info *target.Info) {
	if info.Type != "page" || w.known[info.TargetID] || !w.isPrompt(info.URL) {
		return
	}
	w.known[info.TargetID] = true
	w.opened = append(w.opened, info.TargetID)
	w.openedAt[info.TargetID] = time.Now()
	w.notify()
}

// notify must be called with w.mu held.
func (w *promptWatch) notify() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// count is how many prompts have opened so far.
func (w *promptWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.opened)
}

// await waits until cond holds.
func (w *promptWatch) await(ctx context.Context, what string, cond func() bool) error {
	for {
		w.mu.Lock()
		ok, changed := cond(), w.changed
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-changed:
		}
	}
}

// next waits for prompt number n (0-based) to open.
func (w *promptWatch) next(ctx context.Context, n int) (target.ID, error) {
	err := w.await(ctx, "no prompt opened", func() bool { return len(w.opened) > n })
	if err != nil {
		return "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.opened[n], nil
}

// when is when the browser reported prompt id with its URL.
func (w *promptWatch) when(id target.ID) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.openedAt[id]
}

// waitClosed waits for prompt id to close.
func (w *promptWatch) waitClosed(ctx context.Context, id target.ID) error {
	return w.await(ctx, "the prompt stayed open", func() bool { return w.closed[id] })
}

// prompt is the prompt popup, as the human sees it.
type prompt struct {
	t   testing.TB
	id  target.ID
	ctx context.Context
}

// awaitPrompt waits for prompt number n to open, attaches to it, and waits
// until it is ready for typing: loaded, brought to the front and rendered
// once (autofocus applies at the next rendering), with its first field
// focused (the value's; with a saved value, Approve or the store's
// field). Cancelling the test's session leaves the window open.
func (ch *chromium) awaitPrompt(t testing.TB, n int) *prompt {
	t.Helper()
	ctx, cancel := context.WithTimeout(ch.ctx, 30*time.Second)
	defer cancel()
	id, err := ch.prompts.next(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel, err := browser.AttachTarget(ctx, ch.bctx, id)
	if err != nil {
		t.Fatalf("attach to the prompt: %v", err)
	}
	t.Cleanup(pcancel)
	p := &prompt{t: t, id: id, ctx: pctx}
	// The page may still be loading, so an evaluation can fail with its
	// execution context gone: try again until the deadline.
	for {
		ready, err := chromedp.Run(pctx, chromedp.Evaluate[bool](`document.readyState === "complete" &&
			new Promise((r) => requestAnimationFrame(() => r(["value", "approve", "ask"].includes(document.activeElement?.id))))`,
			chromedp.EvalAwaitPromise))
		if err == nil && ready {
			return p
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the prompt never had its field focused (%v); last error: %v", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// says reports whether the prompt's text holds each of texts.
func (p *prompt) says(texts ...string) bool {
	p.t.Helper()
	body, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		p.t.Fatalf("read the prompt: %v", err)
	}
	for _, s := range texts {
		if !strings.Contains(body, s) {
			p.t.Errorf("the prompt does not say %q; it says %q", s, body)
			return false
		}
	}
	return true
}

// typeSecret types the secret into the prompt's focused field, key by key.
func (p *prompt) typeSecret(secret []byte) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.KeyEvent(string(secret))); err != nil {
		p.t.Fatalf("type into the prompt failed")
	}
}

// send types the secret and presses Enter, as the human would.
func (p *prompt) send(secret []byte) {
	p.t.Helper()
	p.typeSecret(secret)
	p.enter()
}

// enter presses Enter in the prompt. The form is sent on the key press,
// and the host may close the window before the key is released: that
// ends the key event with the target detached, which is no failure.
func (p *prompt) enter() {
	p.t.Helper()
	err := chromedp.Do(p.ctx, chromedp.KeyEvent(kb.Enter))
	if err != nil && !errors.Is(err, chromedp.ErrTargetDetached) {
		p.t.Fatalf("press Enter in the prompt: %v", err)
	}
}

// clickCancel clicks the prompt's Cancel button with the mouse.
func (p *prompt) clickCancel() {
	p.t.Helper()
	p.click("cancel")
}

// click clicks the middle of the prompt's element with id with the mouse
// (a button, a checkbox, a radio button).
func (p *prompt) click(id string) {
	p.t.Helper()
	var r struct{ X, Y float64 }
	raw, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`(() => {
		const b = document.getElementById(`+strconv.Quote(id)+`).getBoundingClientRect();
		return JSON.stringify({ X: b.left + b.width / 2, Y: b.top + b.height / 2 });
	})()`))
	if err != nil || json.Unmarshal([]byte(raw), &r) != nil {
		p.t.Fatalf("find the prompt's %s: %v", id, err)
	}
	click(p.t, p.ctx, r.X, r.Y)
}
