// Package cdp is fillgate's fallback path to the user's browser when no
// extension is connected: it speaks the Chrome DevTools Protocol (chromedp
// over cdproto) to a browser started with a debugging port, and runs the
// extension's own in-page function (extension.InPageJS) in an isolated
// world of each frame, so the checks and the insert are the same code as
// on the extension path.
//
// It attaches only to existing page targets, and detaches when done: it
// never opens, closes, reloads or navigates the user's tabs. The one tab
// it may open and close is the prompt tab of the "cdp-tab" opener.
package cdp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/opener"
)

// Openers for the prompt.
const (
	OpenerSystem = "system"  // the OS opener: xdg-open, open, rundll32
	OpenerCDPTab = "cdp-tab" // a new tab of the CDP browser
)

// Options configures Connect. The agent's request chooses none of them.
type Options struct {
	// AllowHosts are the non-loopback CDP hosts the policy allows, matched
	// exactly (case-insensitive).
	AllowHosts []string
	// Opener is OpenerSystem (the default when empty) or OpenerCDPTab.
	Opener string
	// OpenURL is the system opener; nil means the OS default (xdg-open,
	// open, rundll32 url.dll,FileProtocolHandler) through opener.System.
	// Tests inject a fake.
	OpenURL func(ctx context.Context, url string) error
	// Tab optionally names the page target (its DevTools target id) to
	// use, as the agent's --tab gave it.
	Tab string
	// Logf receives chromedp's own log lines (never protocol messages);
	// nil discards them.
	Logf func(format string, args ...any)
}

// Browser is a fill.Browser over CDP. Use one per `fillgate fill` run;
// its methods are safe for concurrent use.
type Browser struct {
	ep    Endpoint
	opts  Options
	js    string // the in-page function declaration
	world string // the isolated world name of this connection

	bctx    context.Context // chromedp browser-level context
	bcancel context.CancelFunc
	acancel context.CancelFunc
	browser *chromedp.Browser
	// borrowed: the browser is the caller's (Attach), which ends it.
	borrowed bool

	mu       sync.Mutex
	closed   bool
	sessions map[target.ID]*session   // attached targets (pages and OOPIFs)
	worlds   map[cdp.FrameID]*world   // isolated worlds by frame
	located  map[int64]*location      // inspections by Inspection.Tab
	prompts  map[target.ID]*promptTab // prompt tabs we opened
	next     int64                    // last handle given out
	detachWG sync.WaitGroup
}

var _ fill.Browser = (*Browser)(nil)

// Connect reaches the browser at ep: it checks the endpoint (loopback, or
// a host in o.AllowHosts), finds its WebSocket URL (which must stay on the
// endpoint's host or loopback) and opens the browser-level connection. It
// attaches to no tab yet. ctx bounds the connecting only; the connection
// lives until Close.
func Connect(ctx context.Context, ep Endpoint, o Options) (*Browser, error) {
	switch o.Opener {
	case "":
		o.Opener = OpenerSystem
	case OpenerSystem, OpenerCDPTab:
	default:
		return nil, fmt.Errorf("unknown prompt opener %q: use %s or %s", o.Opener, OpenerSystem, OpenerCDPTab)
	}
	if o.OpenURL == nil {
		o.OpenURL = opener.System{}.OpenURL
	}
	wsURL, err := webSocketURL(ctx, ep, o.AllowHosts)
	if err != nil {
		return nil, err
	}

	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dialTimeout := 10 * time.Second
	if d, ok := ctx.Deadline(); ok {
		dialTimeout = max(time.Until(d), time.Millisecond)
	}
	// The connection outlives ctx: only Close ends it.
	actx, acancel := remote.NewAllocator(context.WithoutCancel(ctx), wsURL,
		remote.NoModifyURL, remote.WithDialTimeout(dialTimeout))
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithBrowserOption(
		chromedp.WithBrowserLogf(logf), chromedp.WithBrowserErrorf(logf)))

	b := &Browser{
		ep: ep, opts: o, js: inPageSource(), world: worldName(),
		bctx: bctx, bcancel: bcancel, acancel: acancel,
		sessions: map[target.ID]*session{},
		worlds:   map[cdp.FrameID]*world{},
		located:  map[int64]*location{},
		prompts:  map[target.ID]*promptTab{},
	}
	// Allocate the browser connection with bctx itself (chromedp binds the
	// connection's life to the context of its first use), but give up when
	// ctx ends first.
	stop := context.AfterFunc(ctx, bcancel)
	_, err = chromedp.Targets(bctx)
	stopped := !stop()
	if err != nil || stopped {
		b.shutdown()
		if stopped && ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, newError(ep, connectReason(err), "", err)
	}
	b.browser = chromedp.FromContext(bctx).Browser
	return b, nil
}

// Via implements fill.Browser.
func (b *Browser) Via() string { return fill.ViaCDP }

// Drivable implements fill.Browser: a browser reached over CDP is driven
// by a program by definition (fillgate's own session, and whatever else
// holds its endpoint).
func (b *Browser) Drivable(context.Context) (fill.Drive, error) {
	return fill.Drive{Driven: true, Reasons: []string{"fillgate reaches it over the DevTools Protocol, as any program holding its endpoint can"}}, nil
}

// Endpoint is the endpoint this Browser is connected to.
func (b *Browser) Endpoint() Endpoint { return b.ep }

// Lost is closed when the connection to the browser drops. A caller can
// cancel its request with fill.ErrBrowserGone as the cause.
func (b *Browser) Lost() <-chan struct{} { return b.browser.LostConnection }

// Close detaches from every tab, closes any prompt tab this Browser opened
// and is still open, and closes the connection. It never closes or
// navigates the user's tabs. It is safe to call more than once.
func (b *Browser) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	prompts := make([]*promptTab, 0, len(b.prompts))
	for _, p := range b.prompts {
		prompts = append(prompts, p)
	}
	b.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, p := range prompts {
		if err := p.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	b.shutdown()
	return errors.Join(errs...)
}

// shutdown ends the connection, and with it every session: the browser
// detaches a client's sessions when its connection ends, as it does when
// this process dies, and leaves their tabs open. Detaching each session
// first would wait for its renderer, which a busy page can keep for tens
// of milliseconds, while the agent waits for its result.
func (b *Browser) shutdown() {
	b.mu.Lock()
	sessions := make([]*session, 0, len(b.sessions))
	for _, s := range b.sessions {
		sessions = append(sessions, s)
	}
	b.sessions = map[target.ID]*session{}
	b.worlds = map[cdp.FrameID]*world{}
	b.located = map[int64]*location{}
	b.mu.Unlock()
	b.bcancel()
	b.acancel()
	for _, s := range sessions {
		s.detach() // on a connection that is gone: it only ends the session's goroutines
	}
	b.detachWG.Wait()
	if c := chromedp.FromContext(b.bctx); c != nil && c.Allocator != nil && !b.borrowed {
		c.Allocator.Wait()
	}
}

// handle returns a new int64 handle for Inspection.Tab.
func (b *Browser) handle() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	return b.next
}

// errSessionGone reports that an attached target detached: the tab closed,
// or an out-of-process frame navigated away.
var errSessionGone = errors.New("the target went away")

// session is one attached target: a page, or an out-of-process iframe.
type session struct {
	id       target.ID
	ctx      context.Context
	cancel   context.CancelFunc
	target   *chromedp.Target
	detached <-chan struct{}
	contexts *contextBook
	once     sync.Once
}

// gone reports whether the target detached.
func (s *session) gone() bool {
	select {
	case <-s.detached:
		return true
	default:
		return false
	}
}

// wrap maps a detach to errSessionGone.
func (s *session) wrap(err error) error {
	if errors.Is(err, chromedp.ErrTargetDetached) || s.gone() {
		return errSessionGone
	}
	return err
}

// detach ends the session. chromedp.WithDetachOnCancel makes the
// cancellation send Target.detachFromTarget and nothing else: without it,
// chromedp would send Target.closeTarget and close the user's tab.
func (s *session) detach() { s.once.Do(s.cancel) }

// attach attaches to the existing target id (a page or an iframe target),
// or returns the session already attached.
func (b *Browser) attach(ctx context.Context, id target.ID) (*session, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errors.New("the CDP connection is closed")
	}
	if s, ok := b.sessions[id]; ok && !s.gone() {
		b.mu.Unlock()
		return s, nil
	}
	b.mu.Unlock()

	book := newContextBook(markBinding(b.world))
	tctx, cancel := chromedp.NewContext(b.bctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel(),
		chromedp.WithListener(book.listen))
	// The first Run binds the session to tctx; ctx only bounds the attach.
	stop := context.AfterFunc(ctx, cancel)
	err := chromedp.Do(tctx)
	stopped := !stop()
	if err != nil || stopped {
		cancel()
		if stopped && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("attach: %w", err)
	}
	c := chromedp.FromContext(tctx)
	detached, err := chromedp.Detached(tctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("attach: %w", err)
	}
	// The in-page insert marks that it inserts through this binding, in
	// fillgate's isolated world only: no page script sees it.
	if _, err := cdp.Call(ctx, c.Target, runtime.AddBinding, runtime.AddBindingParams{Name: book.binding, ExecutionContextName: b.world}); err != nil {
		cancel()
		return nil, fmt.Errorf("attach: %w", err)
	}
	s := &session{id: id, ctx: tctx, cancel: cancel, target: c.Target, detached: detached, contexts: book}

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.detach()
		return nil, errors.New("the CDP connection is closed")
	}
	if old, ok := b.sessions[id]; ok && !old.gone() {
		// Another goroutine attached first; keep one.
		b.detachLater(s)
		return old, nil
	}
	b.sessions[id] = s
	return s, nil
}

// release detaches s in the background (Close waits for it).
func (b *Browser) release(s *session) {
	b.mu.Lock()
	if b.sessions[s.id] == s {
		delete(b.sessions, s.id)
	}
	for id, w := range b.worlds {
		if w.sess == s {
			delete(b.worlds, id)
		}
	}
	b.detachLater(s)
	b.mu.Unlock()
}

// detachLater detaches s on another goroutine; b.mu must be held.
func (b *Browser) detachLater(s *session) {
	b.detachWG.Add(1)
	go func() {
		defer b.detachWG.Done()
		s.detach()
	}()
}

// targets lists the browser's targets.
func (b *Browser) targets(ctx context.Context) ([]*target.Info, error) {
	res, err := cdp.Call(ctx, b.browser, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, b.transportError(ctx, err)
	}
	return res.TargetInfos, nil
}

// transportError turns a failed browser-level call into an *Error.
func (b *Browser) transportError(ctx context.Context, err error) error {
	select {
	case <-b.browser.LostConnection:
		return newError(b.ep, ReasonGone, "", err)
	default:
	}
	if ctx.Err() != nil {
		return newError(b.ep, ReasonTimeout, "", ctx.Err())
	}
	var cerr *cdproto.Error
	if errors.As(err, &cerr) {
		return newError(b.ep, ReasonProtocol, fmt.Sprintf("browser error %d", cerr.Code), err)
	}
	return newError(b.ep, ReasonProtocol, "", err)
}

// isLeftMidCall reports whether err says the page's document went away
// while a call awaited its promise: Chromium answers "Inspected target
// navigated or closed" (a navigation or a closed tab) or "Execution
// context was destroyed" (a removed frame).
func isLeftMidCall(err error) bool {
	var cerr *cdproto.Error
	if !errors.As(err, &cerr) {
		return false
	}
	return containsFold(cerr.Message, "navigated or closed") || containsFold(cerr.Message, "context was destroyed")
}

// isContextGone reports whether err says the execution context no longer
// exists.
func isContextGone(err error) bool {
	var cerr *cdproto.Error
	if !errors.As(err, &cerr) {
		return false
	}
	// V8 says "Cannot find context with specified id" for an
	// executionContextId and "uniqueContextId not found" for a unique id.
	return containsFold(cerr.Message, "context") &&
		(containsFold(cerr.Message, "cannot find") || containsFold(cerr.Message, "not found"))
}
