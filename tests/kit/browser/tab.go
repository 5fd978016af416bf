package browser

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/kit/poll"
)

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
