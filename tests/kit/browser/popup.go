package browser

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/kit/poll"
)

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
