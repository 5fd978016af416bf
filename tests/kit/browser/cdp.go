package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/fillgate/fillgate/tests/kit/poll"
)

// Attach connects chromedp to the running browser and returns a context
// for it; chromedp.NewContext on it opens tabs. The connection ends with the
// test.
func (c *Chromium) Attach(t testing.TB, ctx context.Context) context.Context {
	t.Helper()
	allocCtx, cancelAlloc := remote.NewAllocator(ctx, c.WebSocketURL, remote.NoModifyURL)
	browserCtx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if _, err := chromedp.Targets(browserCtx); err != nil {
		t.Fatalf("attach to chromium: %v", err)
	}
	return browserCtx
}

// NewTab opens url in a new tab of the attached browser, waits for it to
// load and brings it to the front (headless Chromium reports
// document.hasFocus() false for a tab that was never brought to the front).
// The tab closes with the test.
func NewTab(t testing.TB, browserCtx context.Context, url string) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	Front(t, ctx)
	return ctx
}

// WaitTarget polls the browser's targets until one of type typ has a URL
// starting with prefix, and returns it.
func WaitTarget(ctx context.Context, browserCtx context.Context, typ, prefix string) (*target.Info, error) {
	for {
		infos, err := chromedp.Targets(browserCtx)
		if err != nil {
			return nil, fmt.Errorf("list targets: %w", err)
		}
		for _, info := range infos {
			if info.Type == typ && strings.HasPrefix(info.URL, prefix) {
				return info, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no %s target at %s: %w", typ, prefix, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// AttachTarget attaches a chromedp context to the existing target id (a
// window the browser opened, such as fillgate's prompt) and brings it to
// the front. A window that has just opened may still be between its
// first blank document and the one it loads; chromedp's attach evaluates
// in the page then, which fails with "Cannot find default execution
// context" until the new document has one. That one error is waited out
// (a fresh attach once the document is there); any other fails at once.
// Cancelling the returned context detaches, leaving the window open.
func AttachTarget(ctx, browserCtx context.Context, id target.ID) (context.Context, context.CancelFunc, error) {
	for {
		tctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
		_, err := chromedp.Call(tctx, page.BringToFront, cdp.Empty{})
		if err == nil {
			return tctx, cancel, nil
		}
		cancel()
		if !strings.Contains(err.Error(), "Cannot find default execution context") {
			return nil, nil, fmt.Errorf("attach to target %s: %w", id, err)
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("attach to target %s: %w (last: %v)", id, ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// OpenTab opens url in a new tab of the attached browser (with newWindow,
// in a window of its own) as the user would, brings it to the front and
// returns the test's own session on it and the tab's id. When the test
// ends the tab is stopped and left on a blank page, never closed: an
// agent tool whose current tab closes under it may fail its next call.
func OpenTab(t testing.TB, browserCtx context.Context, url string, newWindow bool) (context.Context, target.ID) {
	t.Helper()
	res, err := cdp.Call(browserCtx, chromedp.FromContext(browserCtx).Browser, target.CreateTarget,
		target.CreateTargetParams{URL: "about:blank", NewWindow: &newWindow})
	if err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	ctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithTargetID(res.TargetID), chromedp.WithDetachOnCancel())
	t.Cleanup(func() {
		nctx, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		// A login the test submitted may still be on its way (a form's
		// navigation starts after the in-page call returns): stop it, so
		// that it cannot abort the navigation away.
		_, _ = chromedp.Call(nctx, page.StopLoading, cdp.Empty{})
		if err := chromedp.Do(nctx, chromedp.Navigate("about:blank")); err != nil && browserCtx.Err() == nil {
			t.Errorf("leave the tab: %v", err)
		}
		cancel()
	})
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	Front(t, ctx)
	return ctx, res.TargetID
}

// Front brings the tab of ctx to the front of its window.
func Front(t testing.TB, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Call(ctx, page.BringToFront, cdp.Empty{}); err != nil {
		t.Fatalf("bring the tab to the front: %v", err)
	}
}

// Eval evaluates js in the tab of ctx, awaiting a promise, and decodes
// its value into out (unless out is nil).
func Eval(t testing.TB, ctx context.Context, js string, out any) {
	t.Helper()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](js, chromedp.EvalAsValue, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
	}
}

// WaitFor waits, at most d, until js is true in the tab of ctx (which may
// navigate meanwhile).
func WaitFor(t testing.TB, ctx context.Context, js string, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		return err == nil && ok, nil
	}); err != nil {
		t.Fatalf("waiting for %s: %v", js, err)
	}
}

// Focus focuses the element with id in the tab of ctx, as a click into
// it would.
func Focus(t testing.TB, ctx context.Context, id string) {
	t.Helper()
	q, _ := json.Marshal(id)
	var ok bool
	Eval(t, ctx, `(() => { const el = document.getElementById(`+string(q)+`); el?.focus(); return !!el && document.activeElement === el; })()`, &ok)
	if !ok {
		t.Fatalf("could not focus #%s", id)
	}
}

// TypeInto sets the value of the field with id in the tab of ctx as an
// agent's tools do, with an input event. value is never a secret: a user
// name, say.
func TypeInto(t testing.TB, ctx context.Context, id, value string) {
	t.Helper()
	q, _ := json.Marshal(id)
	v, _ := json.Marshal(value)
	var ok bool
	Eval(t, ctx, `(() => { const el = document.getElementById(`+string(q)+`); if (!el) return false; el.focus(); el.value = `+string(v)+`;
el.dispatchEvent(new Event("input", {bubbles: true})); return true; })()`, &ok)
	if !ok {
		t.Fatalf("no field #%s to type into", id)
	}
}

// OpenPopup opens an extension's toolbar popup as its toolbar button does:
// open runs chrome.action.openPopup() in the extension's service worker.
// The popup is the page at url that opens then: OpenPopup attaches to it,
// waits until it has loaded and checks that it is in no tab (a tab a
// program driving the browser can open, script and click; the popup it
// cannot). Cancelling the returned context closes the popup, as the end
// of the test does.
func OpenPopup(t testing.TB, ctx, browserCtx context.Context, url string, open func()) (context.Context, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	before := pagesAt(t, browserCtx, url)
	open()
	var id target.ID
	if err := poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		for p := range pagesAt(t, browserCtx, url) {
			if !before[p] {
				id = p
			}
		}
		return id != "", nil
	}); err != nil {
		t.Fatalf("chrome.action.openPopup() opened no page at %s: %v", url, err)
	}
	// Without WithDetachOnCancel: cancelling this context closes the popup.
	pctx, closePopup := chromedp.NewContext(browserCtx, chromedp.WithTargetID(id))
	t.Cleanup(closePopup)
	// The popup's target exists before its document can be evaluated in:
	// wait until it has loaded, and ask where it is.
	var where string
	if err := poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		got, err := chromedp.Run(pctx, chromedp.Evaluate[string](`document.readyState === "complete" ?
			chrome.tabs.getCurrent().then((tab) => tab === undefined ? "no tab" : "tab " + tab.id) : ""`, chromedp.EvalAwaitPromise))
		if err != nil && strings.Contains(err.Error(), "Cannot find default execution context") {
			return false, nil
		}
		where = got
		return got != "", err
	}); err != nil {
		t.Fatalf("the popup page never loaded: %v", err)
	}
	if where != "no tab" {
		t.Fatalf("the page chrome.action.openPopup() opened is in %s; want the toolbar popup, in no tab", where)
	}
	return pctx, closePopup
}

// Targets is the set of the browser's targets now for which keep holds.
func Targets(t testing.TB, browserCtx context.Context, keep func(*target.Info) bool) map[target.ID]bool {
	t.Helper()
	infos, err := chromedp.Targets(browserCtx)
	if err != nil {
		t.Fatalf("list targets: %v", err)
	}
	ids := map[target.ID]bool{}
	for _, in := range infos {
		if keep(in) {
			ids[in.TargetID] = true
		}
	}
	return ids
}

// pagesAt is the set of the browser's pages at url now.
func pagesAt(t testing.TB, browserCtx context.Context, url string) map[target.ID]bool {
	t.Helper()
	return Targets(t, browserCtx, func(in *target.Info) bool { return in.Type == "page" && in.URL == url })
}
