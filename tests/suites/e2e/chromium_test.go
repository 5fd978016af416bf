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
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/promptwatch"
)

// chromium is one headless Chromium with the extension that `fillgate
// install` unpacked, the host it started from the manifest install wrote,
// and the login pages on two loopback origins.
type chromium struct {
	*browserSession
	browser *browser.Chromium
	bctx    context.Context // the test's own CDP connection: it plays the user
}

// startChromium sets everything up, and checks that `fillgate doctor`
// sees the manifest and the running host with the extension connected.
// Stop it with finish, which also runs the leak scans that need the
// browser's files flushed.
func startChromium(t testing.TB, ctx context.Context) *chromium {
	t.Helper()
	ch := startChromiumIn(t, ctx, newRig(t), "profile")
	ch.doctorSees(t, ctx, ch.host.PID, "chromium", "--browser", "chromium", "--user-data-dir", ch.browser.UserDataDir)
	return ch
}

// startChromiumIn starts a Chromium with the profile dir name in the rig r,
// which other browsers may share (one agent socket dir for all).
func startChromiumIn(t testing.TB, ctx context.Context, r *rig, name string) *chromium {
	t.Helper()
	profile := filepath.Join(r.root, name)
	r.install(t, ctx, filepath.Join(profile, "NativeMessagingHosts"),
		"--browser", "chromium", "--user-data-dir", profile)

	ch := &chromium{browserSession: newSession(t, ctx, r)}
	ch.browser = browser.StartChromium(t, ctx, browser.ChromiumOptions{
		UserDataDir: profile,
		Extensions:  []string{r.extensionDir},
		Env:         r.env,
	})
	ch.browserPID = ch.browser.Cmd.Process.Pid
	ch.bctx = ch.browser.Attach(t, ctx)
	ch.prompts = promptwatch.CDP(t, ch.bctx, ch.isPrompt())

	ch.host = r.waitHostOf(t, ctx, ch.browserPID, 0)
	if ch.host.Browser != "chromium" || ch.host.BrowserName != "chromium" || ch.host.Profile != profile ||
		ch.host.Caller != manifest.ExtensionOrigin || ch.host.Extension.Paused || ch.host.Extension.Instance == "" {
		t.Fatalf("host status %+v; want chromium with profile %s, called by %s, not paused, with an instance id", ch.host, profile, manifest.ExtensionOrigin)
	}
	r.checkHostProcess(t, ch.host, ch.browserPID)
	return ch
}

func (ch *chromium) session() *browserSession { return ch.browserSession }

func (ch *chromium) stop() string {
	ch.browser.Stop()
	return ch.browser.Output()
}

// pageURLs lists the URLs of the browser's page targets.
func (ch *chromium) pageURLs(t testing.TB) []string {
	t.Helper()
	infos, err := chromedp.Targets(ch.bctx)
	if err != nil {
		t.Fatalf("targets: %v", err)
	}
	var urls []string
	for _, info := range infos {
		if info.Type == "page" {
			urls = append(urls, info.URL)
		}
	}
	return urls
}

// closeWindow closes the page target id.
func (ch *chromium) closeWindow(t testing.TB, id string) {
	t.Helper()
	if _, err := chromedp.CallBrowser(ch.bctx, target.CloseTarget, target.CloseTargetParams{TargetID: target.ID(id)}); err != nil {
		t.Fatalf("close the window: %v", err)
	}
}

// tab is a page the user has open, or a frame in it, driven over the
// test's own CDP session.
type tab struct {
	t     testing.TB
	ctx   context.Context
	bctx  context.Context // the browser's, for the page's frames
	input context.Context // the top-level page's, where input goes
}

// open opens url in a new tab in front; the tab closes when the test ends.
func (ch *chromium) open(t testing.TB, url string) page { return ch.openTab(t, url) }

// openTab is open, for the Chromium-only tests that reach into the tab.
func (ch *chromium) openTab(t testing.TB, url string) tab {
	t.Helper()
	ctx := browser.NewTab(t, ch.bctx, url)
	return tab{t: t, ctx: ctx, bctx: ch.bctx, input: ctx}
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
	// As a person clicks a field once it shows: a page that renders its
	// form from script may not have it yet when it has loaded (React 18
	// renders in a task of its own, which can come after the load event).
	tb.waitFor("(" + expr + ") != null")
	if !tb.eval(`(() => { const el = ` + expr + `; el.focus(); return el.getRootNode().activeElement === el; })()`) {
		tb.t.Fatalf("could not focus %s", expr)
	}
}

// navigate loads url in the tab and waits for it to load.
func (tb tab) navigate(url string) {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, chromedp.Navigate(url)); err != nil {
		tb.t.Fatalf("navigate to %s: %v", url, err)
	}
}

// waitFor evaluates expr until it holds; the evaluation fails while the
// page changes, and the deadline bounds it.
func (tb tab) waitFor(expr string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		return chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
	}); err != nil {
		tb.t.Fatalf("the page never got to %s: %v", expr, err)
	}
}

// goBack goes back in the tab's history and waits until the page with
// field id shows again. The navigation starts after the evaluation has
// answered: started within it, it can destroy the page's context before
// the answer is sent ("Inspected target navigated or closed" on a loaded
// machine).
func (tb tab) goBack(id string) {
	tb.t.Helper()
	if _, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](`setTimeout(() => history.back(), 0), true`)); err != nil {
		tb.t.Fatalf("go back: %v", err)
	}
	tb.waitFor(backAt(id))
}

// backAt is the test that the login page with field id is back.
func backAt(id string) string {
	return `location.pathname !== "/welcome" && document.readyState === "complete" && document.getElementById("` + id + `") !== null`
}

// frame attaches to the out-of-process iframe whose URL starts with
// prefix (a frame from another site). A click into it goes through the
// top-level page, as the browser routes a real one.
func (tb tab) frame(prefix string) page {
	tb.t.Helper()
	info, err := browser.WaitTarget(tb.ctx, tb.bctx, "iframe", prefix)
	if err != nil {
		tb.t.Fatal(err)
	}
	ctx, cancel := chromedp.NewContext(tb.bctx, chromedp.WithTargetID(info.TargetID), chromedp.WithDetachOnCancel())
	tb.t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		tb.t.Fatalf("attach to the frame: %v", err)
	}
	return tab{t: tb.t, ctx: ctx, bctx: tb.bctx, input: tb.input}
}

// click clicks the left mouse button at (x, y) of the viewport.
func (tb tab) click(x, y float64) {
	tb.t.Helper()
	for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
		if _, err := chromedp.Call(tb.input, input.DispatchMouseEvent, input.DispatchMouseEventParams{
			Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1,
		}); err != nil {
			tb.t.Fatalf("click at %v,%v: %v", x, y, err)
		}
	}
}

// cdpPrompt is the prompt popup, driven over CDP.
type cdpPrompt struct {
	t   testing.TB
	id  target.ID
	ctx context.Context
}

// awaitPrompt waits for prompt number n to open, attaches to it, and waits
// until it is ready for typing (promptwatch.Ready: loaded, focused where
// the person types, shown), with its first field focused (the value's;
// with a saved value, Approve or the store's field). Cancelling the test's session leaves the window open.
func (ch *chromium) awaitPrompt(t testing.TB, n int) prompt {
	t.Helper()
	ctx, cancel := context.WithTimeout(ch.ctx, 30*time.Second)
	defer cancel()
	id, pctx, pcancel, err := ch.prompts.AttachCDP(ctx, ch.bctx, n, promptwatch.Ready+` && ["value", "approve", "ask"].includes(document.activeElement?.id)`)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pcancel)
	return &cdpPrompt{t: t, id: target.ID(id), ctx: pctx}
}

// askCDP is ask, for the Chromium-only tests that reach into the prompt.
func (ch *chromium) askCDP(t testing.TB, args ...string) (*agent, *cdpPrompt) {
	t.Helper()
	a, p := ask(t, ch, args...)
	return a, p.(*cdpPrompt)
}

func (p *cdpPrompt) windowID() string { return string(p.id) }

// says checks that the prompt's text holds each of texts.
func (p *cdpPrompt) says(texts ...string) {
	p.t.Helper()
	body, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		p.t.Fatalf("read the prompt: %v", err)
	}
	for _, s := range texts {
		if !strings.Contains(body, s) {
			p.t.Errorf("the prompt does not say %q; it says %q", s, body)
			return
		}
	}
}

// typeSecret types the secret into the prompt's focused field, key by key.
func (p *cdpPrompt) typeSecret(secret []byte) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.KeyEvent(string(secret))); err != nil {
		p.t.Fatalf("type into the prompt failed")
	}
}

// send types the secret and presses Enter, as the human would.
func (p *cdpPrompt) send(secret []byte) {
	p.t.Helper()
	p.typeSecret(secret)
	p.enter()
}

// enter presses Enter in the prompt. The form is sent on the key press,
// and the host may close the window before the key is released: that
// ends the key event with the target detached, which is no failure.
func (p *cdpPrompt) enter() {
	p.t.Helper()
	err := chromedp.Do(p.ctx, chromedp.KeyEvent(kb.Enter))
	if err != nil && !errors.Is(err, chromedp.ErrTargetDetached) {
		p.t.Fatalf("press Enter in the prompt: %v", err)
	}
}

// clickCancel clicks the prompt's Cancel button with the mouse.
func (p *cdpPrompt) clickCancel() {
	p.t.Helper()
	p.click("cancel")
}

// click clicks the middle of the prompt's element with id with the mouse
// (a button, a checkbox, a radio button).
func (p *cdpPrompt) click(id string) {
	p.t.Helper()
	var r struct{ X, Y float64 }
	raw, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`(() => {
		const b = document.getElementById(`+strconv.Quote(id)+`).getBoundingClientRect();
		return JSON.stringify({ X: b.left + b.width / 2, Y: b.top + b.height / 2 });
	})()`))
	if err != nil || json.Unmarshal([]byte(raw), &r) != nil {
		p.t.Fatalf("find the prompt's %s: %v", id, err)
	}
	tab{t: p.t, input: p.ctx}.click(r.X, r.Y)
}

// setPaused flips the pause switch in the extension's toolbar popup, as
// the user would, and waits until the host has heard of it.
func (ch *chromium) setPaused(t *testing.T, paused bool) {
	t.Helper()
	pop, closePopup := ch.popup(t)
	defer closePopup()
	if _, err := chromedp.Run(pop.ctx, chromedp.Poll[bool](`document.getElementById("conn").className === "ok"`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the popup does not show the host connected: %v", err)
	}
	if !pop.eval(fmt.Sprintf(`(s => { if (s.checked !== %t) s.click(); return true; })(document.getElementById("pause"))`, paused)) {
		t.Fatal("flip the pause switch")
	}
	ch.awaitPaused(t, ch.ctx, paused)
}

// popupURL is the extension's toolbar popup's page.
var popupURL = manifest.ExtensionOrigin + "popup.html"

// worker attaches to the extension's service worker; the attachment ends
// (the worker keeps running) when the returned function is called.
func (ch *chromium) worker(t testing.TB) (context.Context, context.CancelFunc) {
	t.Helper()
	info, err := browser.WaitTarget(ch.ctx, ch.bctx, "service_worker", manifest.ExtensionOrigin)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := chromedp.NewContext(ch.bctx, chromedp.WithTargetID(info.TargetID), chromedp.WithDetachOnCancel())
	if err := chromedp.Do(wctx); err != nil {
		cancel()
		t.Fatalf("attach to the extension's service worker: %v", err)
	}
	return wctx, cancel
}

// popup opens the extension's toolbar popup as its toolbar button does:
// chrome.action.openPopup() in the extension's service worker. The worker
// answers popup.html only there, never in a tab (a program driving the
// browser can open, script and click a tab), so the popup is the page in
// no tab that opens then. It returns the popup, attached, and a function
// that closes it (also called when the test ends).
func (ch *chromium) popup(t testing.TB) (tab, func()) {
	t.Helper()
	pctx, closePopup := browser.OpenPopup(t, ch.ctx, ch.bctx, popupURL, func() {
		wctx, detach := ch.worker(t)
		defer detach()
		if _, err := chromedp.Run(wctx, chromedp.Evaluate[bool](`chrome.action.openPopup().then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("chrome.action.openPopup() in the extension's worker: %v", err)
		}
	})
	return tab{t: t, ctx: pctx, bctx: ch.bctx, input: pctx}, closePopup
}
