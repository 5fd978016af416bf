package browser

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
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
	if _, err := chromedp.Call(ctx, page.BringToFront, cdp.Empty{}); err != nil {
		t.Fatalf("bring %s to the front: %v", url, err)
	}
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
