package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/websession"
)

// This file is the CDP path's side of the clean room (internal/cleanroom):
// what the room needs of the driven tab (its URL, the browser's user
// agent and languages, its browser context's cookies) and the handover
// of a login's session into it. The handover is the one time fillgate
// navigates a tab: the one the login was asked for, to where the login
// ended.

// Attach makes a Browser of a browser the caller started and holds (the
// clean room's, over its pipe): bctx is a chromedp context of that
// browser, name names it in errors, and tab is the one page target its
// Inspect looks at. Close detaches what the Browser attached; the browser
// is the caller's to end.
func Attach(bctx context.Context, name string, tab target.ID) *Browser {
	b := &Browser{
		ep: Endpoint{URL: "pipe://" + name, Source: name}, opts: Options{Opener: OpenerSystem, Tab: string(tab)},
		js: inPageSource(), world: worldName(),
		bctx: bctx, bcancel: func() {}, acancel: func() {}, borrowed: true,
		sessions: map[target.ID]*session{},
		worlds:   map[cdp.FrameID]*world{},
		located:  map[int64]*location{},
		prompts:  map[target.ID]*promptTab{},
	}
	b.browser = chromedp.FromContext(bctx).Browser
	return b
}

// located returns the location Inspect kept for in.
func (b *Browser) inspected(in fill.Inspection) (*location, error) {
	b.mu.Lock()
	loc, ok := b.located[in.Tab]
	b.mu.Unlock()
	if !ok || in.Token != loc.token {
		return nil, newError(b.ep, ReasonUnknownInspect, "", nil)
	}
	if loc.page.gone() {
		return nil, newError(b.ep, ReasonNoPageTarget, "the tab went away", nil)
	}
	return loc, nil
}

// Run calls the function declaration js with (op, arg) in fillgate's
// isolated world of the top frame of the tab in names, and decodes what it
// returns into out. A world lost to a navigation is made again once.
func (b *Browser) Run(ctx context.Context, in fill.Inspection, js, op string, arg, out any) error {
	loc, err := b.inspected(in)
	if err != nil {
		return err
	}
	return b.runTop(ctx, loc.page, js, op, arg, out)
}

// RunTab is Run on the page target id (attached if it is not yet).
func (b *Browser) RunTab(ctx context.Context, id target.ID, js, op string, arg, out any) error {
	s, err := b.attach(ctx, id)
	if err != nil {
		return b.locateError(ctx, err)
	}
	return b.runTop(ctx, s, js, op, arg, out)
}

// runTop is Run on the page session s.
func (b *Browser) runTop(ctx context.Context, s *session, js, op string, arg, out any) error {
	var argJSON []byte
	if arg != nil {
		var err error
		if argJSON, err = json.Marshal(arg); err != nil {
			return err
		}
	}
	call := func() (*json.RawMessage, error) {
		tree, err := cdp.Call(ctx, s.target, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return nil, s.wrap(err)
		}
		if tree.FrameTree == nil || tree.FrameTree.Frame == nil {
			return nil, errors.New("the page has no frame tree")
		}
		w, err := b.worldFor(ctx, s, tree.FrameTree.Frame.ID)
		if err != nil {
			return nil, err
		}
		obj, err := w.call(ctx, functionDeclaration(js), op, argJSON, true, nil)
		if errors.Is(err, errContextGone) || errors.Is(err, errLeftMidCall) {
			b.forgetWorld(w)
		}
		if err != nil {
			return nil, err
		}
		raw := json.RawMessage(obj.Value)
		return &raw, nil
	}
	raw, err := call()
	if errors.Is(err, errContextGone) || errors.Is(err, errLeftMidCall) {
		raw, err = call()
	}
	if err != nil {
		return b.locateError(ctx, err)
	}
	if err := json.Unmarshal(*raw, out); err != nil {
		return fmt.Errorf("%s: malformed result", op)
	}
	return nil
}

// targetInfo is the page target of the tab in names.
func (b *Browser) targetInfo(ctx context.Context, loc *location) (*target.Info, error) {
	res, err := cdp.Call(ctx, b.browser, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: loc.page.id})
	if err != nil || res.TargetInfo == nil {
		return nil, b.transportError(ctx, cmpErr(err, errors.New("no target info")))
	}
	return res.TargetInfo, nil
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// languagesJS reads the page's navigator.languages.
const languagesJS = `function () { return Array.from(navigator.languages || []).slice(0, 8); }`

// Tab describes the tab in names for the clean room: its URL, and the
// browser's user agent and languages.
func (b *Browser) Tab(ctx context.Context, in fill.Inspection) (websession.Tab, error) {
	loc, err := b.inspected(in)
	if err != nil {
		return websession.Tab{}, err
	}
	info, err := b.targetInfo(ctx, loc)
	if err != nil {
		return websession.Tab{}, err
	}
	v, err := cdp.Call(ctx, b.browser, browser.GetVersion, cdp.Empty{})
	if err != nil {
		return websession.Tab{}, b.transportError(ctx, err)
	}
	var langs []string
	if err := b.runTop(ctx, loc.page, languagesJS, "languages", nil, &langs); err != nil {
		langs = nil // the user agent is what counts; the room falls back to its own languages
	}
	return websession.Tab{URL: info.URL, UserAgent: v.UserAgent, Languages: langs, Family: "chromium"}, nil
}

// SiteCookies returns the cookies of the tab's browser context that are
// sent within site (the site and every name under it).
func (b *Browser) SiteCookies(ctx context.Context, in fill.Inspection, site string) ([]websession.Cookie, error) {
	loc, err := b.inspected(in)
	if err != nil {
		return nil, err
	}
	info, err := b.targetInfo(ctx, loc)
	if err != nil {
		return nil, err
	}
	res, err := cdp.Call(ctx, b.browser, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: info.BrowserContextID})
	if err != nil {
		return nil, b.transportError(ctx, err)
	}
	var out []websession.Cookie
	for _, c := range res.Cookies {
		if websession.InSite(c.Domain, site) {
			out = append(out, websession.FromCDP(c))
		}
	}
	return out, nil
}

// handoverLoad bounds the driven tab's load after a handover.
const handoverLoad = 20 * time.Second

// HandOver gives the tab in names the session a login in the clean room
// left: the cookies it set or changed go into the tab's browser context
// (and the ones it removed come out), the final origin's web storage is
// written before that origin's first script runs, and the tab is
// navigated to where the login ended. It returns what the tab shows then.
func (b *Browser) HandOver(ctx context.Context, in fill.Inspection, s websession.Session) (websession.Shown, error) {
	loc, err := b.inspected(in)
	if err != nil {
		return websession.Shown{}, err
	}
	info, err := b.targetInfo(ctx, loc)
	if err != nil {
		return websession.Shown{}, err
	}
	params := make([]*network.CookieParam, 0, len(s.Cookies.Set))
	for _, c := range s.Cookies.Set {
		params = append(params, c.CDPParam())
	}
	if len(params) > 0 {
		if _, err := cdp.Call(ctx, b.browser, storage.SetCookies, storage.SetCookiesParams{Cookies: params, BrowserContextID: info.BrowserContextID}); err != nil {
			return websession.Shown{}, fmt.Errorf("set the session's cookies: %w", b.transportError(ctx, err))
		}
	}
	for _, c := range s.Cookies.Removed {
		if _, err := cdp.Call(ctx, loc.page.target, network.DeleteCookies, *c.CDPDelete()); err != nil {
			return websession.Shown{}, fmt.Errorf("remove a cookie the login removed: %w", b.locateError(ctx, loc.page.wrap(err)))
		}
	}
	if !s.Storage.Empty() {
		src, err := storageScript(s.Storage)
		if err != nil {
			return websession.Shown{}, err
		}
		added, err := cdp.Call(ctx, loc.page.target, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: src, WorldName: b.world})
		if err != nil {
			return websession.Shown{}, fmt.Errorf("prepare the session's storage: %w", b.locateError(ctx, loc.page.wrap(err)))
		}
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			_, _ = cdp.Call(rctx, loc.page.target, page.RemoveScriptToEvaluateOnNewDocument,
				page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: added.Identifier})
			cancel()
		}()
	}
	lctx, cancel := context.WithTimeout(ctx, handoverLoad)
	defer cancel()
	if err := navigate(lctx, loc.page, s.URL); err != nil {
		return websession.Shown{}, fmt.Errorf("open %s in the tab: %w", originOfURL(s.URL), b.locateError(lctx, err))
	}
	var shown websession.Shown
	if err := b.runTop(lctx, loc.page, b.js, "shown", nil, &shown); err != nil {
		return websession.Shown{}, fmt.Errorf("look at the tab after the handover: %w", err)
	}
	return shown, nil
}

// navigate sends s's page to url and waits for its load event.
func navigate(ctx context.Context, s *session, url string) error {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	loaded := cdp.Events(lctx, s.target, page.LoadEventFired)
	res, err := cdp.Call(ctx, s.target, page.Navigate, page.NavigateParams{URL: url})
	if err != nil {
		return s.wrap(err)
	}
	if res.ErrorText != "" {
		return fmt.Errorf("the page did not load (%s)", res.ErrorText)
	}
	for _, err := range loaded {
		return s.wrap(err)
	}
	return ctx.Err()
}

// storageScript is the script that writes st into its origin's storage,
// run in fillgate's isolated world before the page's own scripts (it
// shares the origin's storage with them).
func storageScript(st websession.Storage) (string, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	return `(() => { const s = ` + string(data) + `;
if (location.origin !== s.origin) return;
for (const [k, v] of s.local || []) localStorage.setItem(k, v);
for (const [k, v] of s.session || []) sessionStorage.setItem(k, v);
})();`, nil
}
