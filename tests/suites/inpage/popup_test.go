package inpage

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
)

// popupURL is the toolbar popup's page.
var popupURL = manifest.ExtensionOrigin + "popup.html"

// inTabNote is what popup.html says when it is opened in a tab: the worker
// answers only the toolbar popup.
const inTabNote = "Open fillgate from its toolbar button"

// openPopup opens the extension's toolbar popup as its toolbar button
// does (chrome.action.openPopup() in the extension's service worker w),
// attaches to the page that opens and checks that it is the popup itself,
// a page of the extension in no tab, which the worker answers. The popup
// closes when t ends.
func openPopup(t testing.TB, ctx, browserCtx context.Context, w *worker) *tab {
	t.Helper()
	pctx, _ := browser.OpenPopup(t, ctx, browserCtx, popupURL, func() {
		var opened bool
		w.call(&opened, `function () { return chrome.action.openPopup().then(() => true); }`)
	})
	return &tab{t: t, ctx: pctx, bctx: browserCtx}
}

// tell sends msg to the extension with chrome.runtime.sendMessage from
// the page of tb (a page of the extension) and returns what came back,
// as JSON ("null" for no answer), or "error: " and why the call failed.
func (tb *tab) tell(msg map[string]any) string {
	tb.t.Helper()
	m, err := json.Marshal(msg)
	if err != nil {
		tb.t.Fatal(err)
	}
	got, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`chrome.runtime.sendMessage(`+string(m)+`).then(
		(r) => JSON.stringify(r ?? null), (e) => "error: " + e.message)`, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("send %s from the extension's page: %v", m, err)
	}
	return got
}

// unanswered checks that popup.html opened in the tab tb is answered
// nothing, whatever it asks: it says to open fillgate from the toolbar
// button, shows no host, outcome or lease, and its state, pause and
// end_lease messages get no reply.
func (tb *tab) unanswered(t testing.TB) {
	t.Helper()
	if _, err := chromedp.Run(tb.ctx, chromedp.Poll[bool](`(($) => $("conn").textContent.startsWith(`+"`"+inTabNote+"`"+`) &&
		$("recent").children.length === 0 && $("leasebox").hidden && $("leases").children.length === 0)
		((id) => document.getElementById(id))`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("popup.html opened in a tab does not say that it gets nothing: %v", err)
	}
	for _, msg := range []map[string]any{
		{"type": "state"},
		{"type": "pause", "paused": true},
		{"type": "end_lease", "id": "l1"},
	} {
		if got := tb.tell(msg); got != "null" && !strings.HasPrefix(got, "error: ") {
			t.Errorf("popup.html in a tab sent %v and got an answer: %s", msg, got)
		}
	}
}
