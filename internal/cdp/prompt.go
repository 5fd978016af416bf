package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/fillgate/fillgate/internal/fill"
)

// OpenPrompt implements fill.Browser. With the system opener it has the OS
// (xdg-open, open, rundll32) open a private page that leads to the URL (see
// internal/opener: the URL itself never goes into an argv) and returns a
// window whose Closed is nil (the opener cannot tell). With OpenerCDPTab it
// opens the URL in a browser context of its own (Target.createBrowserContext,
// never the agent's context: no cookies, storage or cache shared with the
// agent's pages, and disposed when the prompt ends, or by the browser when
// this connection drops, as it does when fillgate is killed), and Closed
// fires when that tab is closed. Either way the URL goes to the browser
// only, never into a result or a log. Only a loopback http URL is opened.
//
// A separate context does not hide the tab from a DevTools client that
// auto-attaches to every target (Playwright's connectOverCDP files pages of
// contexts it did not make under its default context); see docs/cdp.md.
func (b *Browser) OpenPrompt(ctx context.Context, rawURL string) (fill.PromptWindow, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || !IsLoopback(u.Hostname()) {
		return nil, newError(b.ep, ReasonPromptNotOpened, "the prompt URL is not a loopback http URL", nil)
	}
	if b.opts.Opener != OpenerCDPTab {
		if err := b.opts.OpenURL(ctx, rawURL); err != nil {
			return nil, newError(b.ep, ReasonPromptNotOpened, err.Error()+"; "+openerFix, err)
		}
		return systemWindow{}, nil
	}

	// Listen before the tab exists, so its end cannot be missed.
	events, stop := b.browser.Subscribe(target.TargetDestroyed.Method)
	if _, err := cdp.Call(ctx, b.browser, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		stop()
		return nil, b.transportError(ctx, err)
	}
	// The browser makes the context and the tab before it answers: a call
	// cut short by ctx would leave them with nobody to close them. So the
	// calls are bounded by their own timeout only, and what was made after
	// ctx ended is closed at once.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	defer cancel()
	bc, err := cdp.Call(cctx, b.browser, target.CreateBrowserContext, target.CreateBrowserContextParams{DisposeOnDetach: new(true)})
	if err != nil {
		stop()
		return nil, b.transportError(ctx, err)
	}
	res, err := cdp.Call(cctx, b.browser, target.CreateTarget, target.CreateTargetParams{URL: rawURL, BrowserContextID: bc.BrowserContextID})
	if err != nil {
		stop()
		_, _ = cdp.Call(cctx, b.browser, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: bc.BrowserContextID})
		return nil, b.transportError(ctx, err)
	}
	p := &promptTab{b: b, id: res.TargetID, context: bc.BrowserContextID, closed: make(chan struct{})}
	b.mu.Lock()
	b.prompts[p.id] = p
	b.mu.Unlock()
	go p.watch(events, stop)
	if ctx.Err() != nil {
		_ = p.Close(cctx)
		return nil, b.transportError(ctx, ctx.Err())
	}
	return p, nil
}

// openerFix is what to do when the system opener cannot show the prompt.
const openerFix = "to fix: set prompt_opener = \"cdp-tab\" in the policy (the prompt then opens as a tab of the CDP browser), " +
	"or run the agent in a desktop session (on Linux with DISPLAY or WAYLAND_DISPLAY set) where a browser can open"

// createTimeout bounds making (or, after a cancelled request, closing
// again) the prompt tab.
const createTimeout = 10 * time.Second

// systemWindow is a prompt the OS opener showed: fillgate cannot see or
// close it.
type systemWindow struct{}

// Closed implements fill.PromptWindow: nil, the opener cannot tell.
func (systemWindow) Closed() <-chan struct{} { return nil }

// Close implements fill.PromptWindow: nothing to do.
func (systemWindow) Close(context.Context) error { return nil }

// promptTab is a prompt opened as a tab of the CDP browser, in a browser
// context made for it. It is the only tab fillgate ever closes.
type promptTab struct {
	b          *Browser
	id         target.ID
	context    cdp.BrowserContextID
	closed     chan struct{}
	closedOnce sync.Once
	closeOnce  sync.Once
	closeErr   error
}

// Closed implements fill.PromptWindow: it is closed once the tab is gone.
func (p *promptTab) Closed() <-chan struct{} { return p.closed }

// Close implements fill.PromptWindow: it disposes of the browser context
// made for the prompt, which closes its one tab (only that tab) in the
// same call, and waits until the browser reports the tab gone. Should the
// tab outlive its context, it asks the browser to close the tab itself.
// Safe to call more than once.
func (p *promptTab) Close(ctx context.Context) error {
	p.closeOnce.Do(func() {
		_, err := cdp.Call(ctx, p.b.browser, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: p.context})
		var cerr *cdproto.Error
		switch {
		case err != nil && !errors.As(err, &cerr):
			p.closeErr = fmt.Errorf("dispose of the prompt's browser context: %w", p.b.transportError(ctx, err))
		case p.gone():
		default: // a browser error, or the tab still there: close the tab itself
			p.closeErr = p.close(ctx)
		}
		p.b.mu.Lock()
		delete(p.b.prompts, p.id)
		p.b.mu.Unlock()
	})
	return p.closeErr
}

// gone reports whether the browser has reported the tab destroyed. The
// browser sends that event before it answers the disposal of the tab's
// context, on the same connection, so by then it has been read.
func (p *promptTab) gone() bool {
	select {
	case <-p.closed:
		return true
	default:
		return false
	}
}

// closeRetry is how long close waits for the tab to go before asking
// again: Chromium drops a close request that arrives while the tab is
// navigating, as the prompt is when the human's answer (a form POST) has
// just reached fillgate.
const closeRetry = 250 * time.Millisecond

// close asks the browser to close the tab until it is gone.
func (p *promptTab) close(ctx context.Context) error {
	for {
		_, err := cdp.Call(ctx, p.b.browser, target.CloseTarget, target.CloseTargetParams{TargetID: p.id})
		var cerr *cdproto.Error
		switch {
		case errors.As(err, &cerr):
			return nil // a browser error means the tab is already gone
		case err != nil:
			return fmt.Errorf("close the prompt tab: %w", p.b.transportError(ctx, err))
		}
		select {
		case <-p.closed:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("close the prompt tab: %w", newError(p.b.ep, ReasonTimeout, "the tab did not close", ctx.Err()))
		case <-time.After(closeRetry):
		}
	}
}

// watch closes p.closed when the browser reports the tab destroyed.
func (p *promptTab) watch(events <-chan jsonv2.Value, stop func()) {
	defer stop()
	for {
		select {
		case <-p.b.bctx.Done():
			return
		case raw, ok := <-events:
			if !ok {
				return
			}
			var ev target.EventTargetDestroyed
			if json.Unmarshal(raw, &ev) == nil && ev.TargetID == p.id {
				p.closedOnce.Do(func() { close(p.closed) })
				return
			}
		}
	}
}
