package cleanroom

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdpproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/extension"
	"github.com/fillgate/fillgate/internal/browserproc"
	"github.com/fillgate/fillgate/internal/cdp"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/leakcheck"
	"github.com/fillgate/fillgate/internal/websession"
	"github.com/fillgate/fillgate/internal/wording"
)

//go:embed room.js
var roomJS string

// Bounds of a room's waits.
const (
	// startBudget bounds the browser's start and its first tab.
	startBudget = 30 * time.Second
	// loadBudget bounds loading the driven tab's page again.
	loadBudget = 30 * time.Second
	// quietFor is how long the room's page must be quiet (no document
	// loading, at most two other requests open, no navigation) to count
	// as settled.
	quietFor = 400 * time.Millisecond
	// fieldEvery is how often the room looks for the login field while
	// its page comes up.
	fieldEvery = 50 * time.Millisecond
	// settleBudget bounds the wait for a login to come to its end.
	settleBudget = 20 * time.Second
	// maxStorage is the most web storage a handover carries (a native
	// message to the browser is at most 1 MB).
	maxStorage = 512 << 10
)

// room is one clean room: its browser, its one tab, and what it learned.
type room struct {
	cfg     Config
	in      fill.Inspection // the driven tab's
	login   string          // the origin of the login page
	kind    string          // the field kind filled
	service string          // the service asked for
	dir     string
	done    func() // releases the profile

	acancel, bcancel, tcancel context.CancelFunc
	tctx                      context.Context
	c                         *chromedp.Context // the tab's
	cdp                       *cdp.Browser      // the tab as fillgate's in-page functions see it
	rin                       fill.Inspection   // the room's own inspection

	mu      sync.Mutex
	forks   map[string]chan struct{} // sites whose cookies were copied in (closed once done)
	seeded  map[websession.Key]websession.Cookie
	bound   bool                       // a response started a device-bound session
	carried string                     // the origin a redirect would have carried the login's body to (stopped)
	sent    string                     // the origin of another site a request would have carried the value to (stopped)
	opened  string                     // the address the room opened
	docs    map[network.RequestID]bool // requests open, true for documents
	// rawDue counts, by request, a document's responses whose raw headers
	// (responseReceivedExtraInfo) Chromium said will come, less those that
	// came: a device-bound session may show only there, so the login is
	// not settled while one is due. Raw headers that come first count
	// below zero.
	rawDue   map[network.RequestID]int
	last     time.Time     // the page's last sign of life
	kick     chan struct{} // closed and replaced on activity
	closed   bool
	closeOne sync.Once

	// value is a copy of the value from its insert until Close, for
	// egress; smu guards it (not mu: a check may take a millisecond).
	smu   sync.Mutex
	value []byte
}

// start starts a room's browser with the driven tab's user agent and
// languages, and its one tab in a browser context of its own (in memory
// only: no cookie, cache or storage of it reaches the disk).
func start(ctx context.Context, cfg Config, exe string) (*room, error) {
	dir, done, err := newProfile(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("clean room profile: %w", err)
	}
	r := &room{cfg: cfg, dir: dir, done: done,
		forks: map[string]chan struct{}{}, seeded: map[websession.Key]websession.Cookie{},
		docs: map[network.RequestID]bool{}, rawDue: map[network.RequestID]int{}, last: time.Now(), kick: make(chan struct{})}
	opts := append(flags(dir), chromedp.ExecPath(exe), chromedp.NoInheritEnv, chromedp.Env(environ()...),
		chromedp.ModifyCmdFunc(ownGroup))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithBrowserOption(
		chromedp.WithBrowserLogf(discard), chromedp.WithBrowserErrorf(discard)))
	// chromedp's cancel of a context that allocated or attached waits for
	// a token only the first call takes: a second call (Close after a
	// start that timed out or was called off) would wait forever.
	bcancel = sync.OnceFunc(bcancel)
	r.acancel, r.bcancel = acancel, bcancel
	r.tcancel = func() {}
	sctx, cancel := context.WithTimeout(ctx, startBudget)
	defer cancel()
	t0 := time.Now()
	stop := context.AfterFunc(sctx, bcancel)
	err = chromedp.Do(bctx)
	stopped := !stop()
	if err != nil || stopped {
		r.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("start the clean room's browser %s: %w", exe, cmpErr(err, sctx.Err()))
	}
	r.lap("browser_started", &t0)
	tctx, tcancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(r.listen))
	tcancel = sync.OnceFunc(tcancel)
	r.tctx, r.tcancel = tctx, tcancel
	stop = context.AfterFunc(sctx, tcancel)
	err = chromedp.Do(tctx)
	stopped = !stop()
	if err != nil || stopped {
		r.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("open the clean room's tab: %w", cmpErr(err, sctx.Err()))
	}
	r.c = chromedp.FromContext(tctx)
	// Every request waits, before it goes out, until the driven
	// context's cookies of its site are in (fork).
	if _, err := cdpproto.Call(sctx, r.c.Target, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}},
	}); err != nil {
		r.Close()
		return nil, fmt.Errorf("clean room: intercept requests: %w", err)
	}
	r.cdp = cdp.Attach(bctx, "fillgate's clean room", r.c.Target.TargetID)
	r.lap("tab_opened", &t0)
	cfg.Log.Info("clean room started", "browser", exe)
	return r, nil
}

func discard(string, ...any) {}

// lap writes a debug "timing" record of a step of the room (its name and
// the milliseconds since *t0), and moves *t0 on.
func (r *room) lap(step string, t0 *time.Time) {
	now := time.Now()
	fill.LogTiming(r.cfg.Log, now.Sub(*t0), "room", step)
	*t0 = now
}

// extensionInPage is fillgate's in-page function (its "shown" op).
func extensionInPage() string { return extension.InPageJS }

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// flags are the room's browser's command line: headless, no first-run
// work, no extensions, sync, background traffic, crash reports or saved
// passwords, and its own profile. chromedp adds --remote-debugging-pipe
// and about:blank. The driven browser's user agent and languages are set
// on the room's tab (bind), once the room knows them.
func flags(dir string) []chromedp.ExecAllocatorOption {
	f := []chromedp.ExecAllocatorOption{
		chromedp.UserDataDir(dir),
		chromedp.Flag("headless", "new"),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-features", "PasswordManagerOnboarding,AutofillServerCommunication,Translate,OptimizationHints,MediaRouter"),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1280, 900),
	}
	if os.Geteuid() == 0 {
		f = append(f, chromedp.Flag("no-sandbox", true)) // Chromium refuses to run as root with its sandbox
	}
	return f
}

// bind makes the room the one for the driven tab in, of the driven
// browser d: its page presents itself with that browser's user agent and
// languages (those roomTab takes; else the room browser's own user agent,
// without its headless mark).
func (r *room) bind(ctx context.Context, d Driven, in fill.Inspection, tab websession.Tab) error {
	r.mu.Lock() // a spare's browser may have heard events before
	r.cfg.Driven = d
	r.in, r.login, r.kind = in, in.Origin(), in.Field.Kind
	r.mu.Unlock()
	ua, langs := roomTab(tab)
	if ua == "" {
		v, err := cdpproto.Call(ctx, r.c.Browser, browser.GetVersion, cdpproto.Empty{})
		if err != nil {
			return err
		}
		ua = strings.Replace(v.UserAgent, "HeadlessChrome/", "Chrome/", 1)
	}
	_, err := cdpproto.Call(ctx, r.c.Target, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
		UserAgent: ua, AcceptLanguage: strings.Join(langs, ","),
	})
	return err
}

// listen hears the tab's events on the connection's reading goroutine:
// it keeps count of what loads, notes a device-bound session, and hands
// each paused request to fork on a goroutine of its own.
func (r *room) listen(ev any) {
	switch ev := ev.(type) {
	case *fetch.EventRequestPaused:
		go r.paused(ev)
	case *network.EventRequestWillBeSent:
		// A redirect's response comes only here, with the request it
		// leads to (no responseReceived for it), before that request
		// goes out; its raw headers (responseReceivedExtraInfo) may come
		// at any time after, even once the login has settled.
		bound := ev.RedirectResponse != nil && bindsSession(ev.RedirectResponse.Headers)
		doc := ev.Type == network.ResourceTypeDocument
		r.note(func() {
			r.docs[ev.RequestID] = doc
			r.bound = r.bound || bound
			if doc && ev.RedirectResponse != nil && ev.RedirectHasExtraInfo {
				r.due(ev.RequestID, 1)
			}
		})
	case *network.EventLoadingFinished:
		r.note(func() { delete(r.docs, ev.RequestID) })
	case *network.EventLoadingFailed:
		r.note(func() { delete(r.docs, ev.RequestID) })
	case *network.EventResponseReceived:
		bound := ev.Response != nil && bindsSession(ev.Response.Headers)
		r.note(func() {
			r.bound = r.bound || bound
			if ev.Type == network.ResourceTypeDocument && ev.HasExtraInfo {
				r.due(ev.RequestID, 1)
			}
		})
	case *network.EventResponseReceivedExtraInfo:
		bound := bindsSession(ev.Headers)
		r.note(func() {
			r.bound = r.bound || bound
			r.due(ev.RequestID, -1)
		})
	case *page.EventFrameNavigated:
		r.note(func() {})
	case *page.EventNavigatedWithinDocument:
		r.note(func() {})
	}
}

// due adds n to the raw headers due for request id (under r.mu).
func (r *room) due(id network.RequestID, n int) {
	if r.rawDue[id] += n; r.rawDue[id] == 0 {
		delete(r.rawDue, id)
	}
}

// note runs f under the lock and marks a sign of life.
func (r *room) note(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
	r.last = time.Now()
	close(r.kick)
	r.kick = make(chan struct{})
}

// paused lets a paused request go on once its site's cookies are in. A
// redirect that would carry a request's body on to another origin than
// the login's (307 or 308 keep the method and the body: the password) is
// stopped there.
func (r *room) paused(ev *fetch.EventRequestPaused) {
	ctx, cancel := context.WithTimeout(r.tctx, 10*time.Second)
	defer cancel()
	raw := ev.Request.URL
	fail := func() {
		_, _ = cdpproto.Call(ctx, r.c.Target, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
	}
	r.mu.Lock()
	login := r.login
	r.mu.Unlock()
	if ev.RedirectedRequestID != "" && ev.Request.HasPostData && originOf(raw) != login {
		r.note(func() { r.carried = originOf(raw) })
		fail()
		return
	}
	if r.sends(ctx, ev) {
		r.note(func() {
			if r.sent == "" {
				r.sent = originOf(raw)
			}
		})
		fail()
		return
	}
	if u, err := url.Parse(raw); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
		if site := websession.Site(u.Hostname()); site != "" {
			r.fork(ctx, site)
		}
	}
	_, _ = cdpproto.Call(ctx, r.c.Target, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
}

// sends reports whether the paused request ev would carry the value
// (in its address, a header or its body, in any encoding leakcheck
// knows) to another site than the login's: a script in the page sending
// it away. A request to the login's own site may carry it (that is the
// login); before the insert there is nothing to carry. A body that
// cannot be read counts as carrying it.
func (r *room) sends(ctx context.Context, ev *fetch.EventRequestPaused) bool {
	r.smu.Lock()
	defer r.smu.Unlock()
	if r.value == nil {
		return false
	}
	u, err := url.Parse(ev.Request.URL)
	if err != nil {
		return true
	}
	r.mu.Lock()
	origin := r.login
	r.mu.Unlock()
	if login, err := url.Parse(origin); err == nil && websession.Site(u.Hostname()) == websession.Site(login.Hostname()) && websession.Site(u.Hostname()) != "" {
		return false
	}
	var b strings.Builder
	b.WriteString(ev.Request.URL + ev.Request.URLFragment + "\n")
	for k, v := range ev.Request.Headers {
		fmt.Fprintf(&b, "%s: %v\n", k, v)
	}
	for _, e := range ev.Request.PostDataEntries {
		b.Write(e.Bytes)
	}
	if ev.Request.HasPostData && len(ev.Request.PostDataEntries) == 0 {
		body, err := cdpproto.Call(ctx, r.c.Target, network.GetRequestPostData, network.GetRequestPostDataParams{RequestID: ev.NetworkID})
		if err != nil {
			return true
		}
		b.Write(body.PostData)
	}
	return leakcheck.Carries(b.String(), r.value)
}

// fork copies the driven context's cookies of site into the room, once.
// What the room holds of site right after is what a handover compares
// the login's cookies with.
func (r *room) fork(ctx context.Context, site string) {
	r.mu.Lock()
	d, in := r.cfg.Driven, r.in
	if d == nil {
		r.mu.Unlock()
		return // a spare's browser, not bound to a request yet: nothing to copy
	}
	done, ok := r.forks[site]
	if ok {
		r.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
		}
		return
	}
	done = make(chan struct{})
	r.forks[site] = done
	r.mu.Unlock()
	defer close(done)

	cookies, err := d.SiteCookies(ctx, in, site)
	if err != nil {
		r.cfg.Log.Warn("clean room: cannot read the agent's browser's cookies for a site", "site", site, "err", err)
		return
	}
	cookies, left := roomCookies(cookies)
	if len(cookies) > 0 {
		params := make([]*network.CookieParam, len(cookies))
		for i, c := range cookies {
			params[i] = c.CDPParam()
		}
		if _, err := cdpproto.Call(ctx, r.c.Browser, storage.SetCookies, storage.SetCookiesParams{Cookies: params, BrowserContextID: r.c.BrowserContextID}); err != nil {
			r.cfg.Log.Warn("clean room: cannot copy cookies in", "site", site, "err", err)
		}
	}
	held, err := r.cookies(ctx)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range held {
		if websession.InSite(c.Domain, site) {
			r.seeded[c.Key()] = c
		}
	}
	r.cfg.Log.Debug("clean room: cookies copied in", "site", site, "cookies", len(cookies), "left_out", left)
}

// cookies are the cookies the room's browser context holds.
func (r *room) cookies(ctx context.Context) ([]websession.Cookie, error) {
	res, err := cdpproto.Call(ctx, r.c.Browser, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: r.c.BrowserContextID})
	if err != nil {
		return nil, err
	}
	out := make([]websession.Cookie, len(res.Cookies))
	for i, c := range res.Cookies {
		out[i] = websession.FromCDP(c)
	}
	return out, nil
}

// settle waits until the page is quiet for quietFor (no document
// loading, at most two other requests open, no navigation), or until
// limit.
func (r *room) settle(ctx context.Context, limit time.Duration) {
	for !r.quiet() {
		if !r.wait(ctx, time.Now().Add(limit)) {
			return
		}
	}
}

// quiet reports whether the page has been quiet for quietFor.
func (r *room) quiet() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	docs, others := 0, 0
	for _, doc := range r.docs {
		if doc {
			docs++
		} else {
			others++
		}
	}
	for _, n := range r.rawDue {
		if n > 0 {
			return false // a document's raw headers are still to come
		}
	}
	return docs == 0 && others <= 2 && time.Since(r.last) >= quietFor
}

// wait waits for a sign of life of the page, or until it could have
// been quiet for quietFor (at least fieldEvery), and reports false once
// deadline passed or ctx ended.
func (r *room) wait(ctx context.Context, deadline time.Time) bool {
	r.mu.Lock()
	since, kick := time.Since(r.last), r.kick
	r.mu.Unlock()
	left := time.Until(deadline)
	if left <= 0 {
		return false
	}
	wait := min(max(quietFor-since, fieldEvery), left)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-kick:
	case <-t.C:
	}
	return true
}

// located is what room.js's locate answers.
type located struct {
	Count   int  `json:"count"`
	Focused bool `json:"focused"`
}

// open loads url in the room, finds and focuses the field of req's kind
// (after typing the account and going on, for a page that asks for it
// first), and inspects it.
func (r *room) open(ctx context.Context, req fill.Request, raw string) (fill.Inspection, error) {
	r.service = req.Service
	lctx, cancel := context.WithTimeout(ctx, loadBudget)
	defer cancel()
	t0 := time.Now()
	r.mu.Lock()
	r.opened = raw
	r.mu.Unlock()
	if err := r.navigate(lctx, raw); err != nil {
		return fill.Inspection{}, fmt.Errorf("the clean room cannot open the agent's page on %s: %w", r.login, err)
	}
	r.lap("page_loaded", &t0)
	loc, err := r.waitField(lctx, req.Field)
	if err != nil {
		return fill.Inspection{}, err
	}
	if loc.Count == 0 && req.Field == fill.FieldPassword && r.in.Account != "" {
		// The page asks for the account first: the agent's tab reached
		// the password step by typing there.
		var st struct {
			Stepped bool `json:"stepped"`
		}
		if err := r.cdp.RunTab(lctx, r.c.Target.TargetID, roomJS, "step", map[string]string{"account": r.in.Account}, &st); err != nil {
			return fill.Inspection{}, fmt.Errorf("the clean room cannot go on from the account step: %w", err)
		}
		if st.Stepped {
			r.note(func() {})
			if loc, err = r.waitField(lctx, req.Field); err != nil {
				return fill.Inspection{}, err
			}
		}
	}
	switch {
	case loc.Count == 0:
		return fill.Inspection{}, refuse("opened again in fillgate's clean room, the agent's page on %s shows no %s field (a login step that lives only in that page, reached by typing there%s); %s",
			r.login, wording.FieldNoun(req.Field), stepNote(req.Field, r.in.Account), inPageFix(req.Service))
	case !loc.Focused:
		return fill.Inspection{}, refuse("opened again in fillgate's clean room, the agent's page on %s shows %d %s fields, and nothing tells which is the one the agent chose; %s",
			r.login, loc.Count, wording.FieldNoun(req.Field), inPageFix(req.Service))
	}
	r.lap("field_found", &t0)
	rin, err := r.cdp.Inspect(lctx, fill.Request{Service: req.Service, Field: req.Field})
	if err != nil {
		return fill.Inspection{}, fmt.Errorf("the clean room cannot inspect the page it opened: %w", err)
	}
	r.lap("inspected", &t0)
	r.rin = rin
	return rin, nil
}

// stepNote says what the room tried for a page that asks for the account
// first.
func stepNote(field, account string) string {
	switch {
	case field != fill.FieldPassword:
		return ""
	case account == "":
		return "; the agent's page shows no account name to go on with"
	}
	return "; going on with the account name the agent's page shows did not reach it"
}

// waitField looks for the field of kind until it is there or the page
// has been quiet without it (a page whose script renders the form after
// its load event gets that long).
func (r *room) waitField(ctx context.Context, kind string) (located, error) {
	for {
		loc, err := r.locate(ctx, kind)
		if err != nil || loc.Count > 0 || r.quiet() {
			return loc, err
		}
		t := time.NewTimer(fieldEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return loc, nil
		case <-t.C:
		}
	}
}

// locate finds and focuses the field of kind, picked by the driven
// field's id or name when several are shown.
func (r *room) locate(ctx context.Context, kind string) (located, error) {
	arg := map[string]any{"kind": kind, "account": r.in.Account}
	if h := r.in.Field.Hint; h != nil {
		arg["hint"] = h
	}
	var loc located
	if err := r.cdp.RunTab(ctx, r.c.Target.TargetID, roomJS, "locate", arg, &loc); err != nil {
		return located{}, fmt.Errorf("the clean room cannot look for the login field: %w", err)
	}
	return loc, nil
}

// navigate loads raw in the room's tab and waits for its load event.
func (r *room) navigate(ctx context.Context, raw string) error {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	loaded := cdpproto.Events(lctx, r.c.Target, page.LoadEventFired)
	res, err := cdpproto.Call(ctx, r.c.Target, page.Navigate, page.NavigateParams{URL: raw})
	if err != nil {
		return err
	}
	if res.ErrorText != "" {
		return fmt.Errorf("the page did not load (%s)", res.ErrorText)
	}
	for _, err := range loaded {
		return err
	}
	return ctx.Err()
}

// Insert implements fill.Room.
func (r *room) Insert(ctx context.Context, in fill.Inspection, value []byte, opt fill.InsertOptions) (fill.Verdict, error) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return fill.Verdict{}, errClosed
	}
	r.smu.Lock()
	clear(r.value)
	r.value = bytes.Clone(value)
	r.smu.Unlock()
	r.note(func() {})
	return r.cdp.Insert(ctx, in, value, opt)
}

// HandOver implements fill.Room.
func (r *room) HandOver(ctx context.Context, holds func(string) bool) (fill.Handover, error) {
	t0 := time.Now()
	r.settle(ctx, settleBudget)
	r.lap("login_settled", &t0)
	if err := ctx.Err(); err != nil {
		return fill.Handover{}, err
	}
	r.mu.Lock()
	bound, carried, sent := r.bound, r.carried, r.sent
	r.mu.Unlock()
	if sent != "" {
		return fill.Handover{}, refusal{fmt.Sprintf("a script in the login page on %s sent the %s to another site, %s; fillgate's clean room stopped it, and nothing was handed over. "+
			"If that site is where %s signs you in, %s", r.login, wording.FieldNoun(r.kind), sent, r.service, inPageFix(r.service))}
	}
	if carried != "" {
		return fill.Handover{}, refusal{fmt.Sprintf("the site sent the login on to another origin, %s, with a redirect that keeps the form's body (307 or 308), which would have carried the %s there; fillgate's clean room stopped it, and nothing was handed over",
			carried, wording.FieldNoun(r.kind))}
	}
	if bound {
		return fill.Handover{}, failure{fmt.Sprintf("the site started a device-bound session during the login (%s): its session is bound to fillgate's clean room and would die in the agent's browser, so nothing was handed over; %s",
			"Secure-Session-Registration", inPageFix(r.service)), nil}
	}
	var at websession.Shown
	if err := r.cdp.RunTab(ctx, r.c.Target.TargetID, extensionInPage(), "shown", nil, &at); err != nil {
		return fill.Handover{}, fmt.Errorf("the clean room cannot look at where the login ended: %w", err)
	}
	if at.Origin == r.login && count(at, r.kind) > 0 {
		return fill.Handover{}, failure{fmt.Sprintf("the site did not take the login: fillgate's clean room still shows its %s field on %s (a wrong value, or a step the site asks for); nothing was handed over",
			wording.FieldNoun(r.kind), r.login), nil}
	}
	next := ""
	if r.kind == fill.FieldPassword && at.Code > 0 {
		next = fill.FieldOTP
	}
	all, err := r.cookies(ctx)
	if err != nil {
		return fill.Handover{}, fmt.Errorf("the clean room cannot read the login's cookies: %w", err)
	}
	r.mu.Lock()
	before := make([]websession.Cookie, 0, len(r.seeded))
	for _, c := range r.seeded {
		before = append(before, c)
	}
	r.mu.Unlock()
	changes := websession.Diff(before, all)
	var st websession.Storage
	if err := r.cdp.RunTab(ctx, r.c.Target.TargetID, roomJS, "storage", nil, &st); err != nil {
		r.cfg.Log.Warn("clean room: cannot read the final origin's storage", "err", err)
		st = websession.Storage{}
	}
	storageNote := ""
	if st.Size() > maxStorage {
		storageNote = "too large"
		st = websession.Storage{Origin: st.Origin}
	}
	r.lap("session_read", &t0)
	sess := websession.Session{Cookies: changes, Storage: st, URL: at.URL}
	if r.ownLeft(sess).Any(holds) {
		return fill.Handover{}, failure{fmt.Sprintf("the site keeps the %s in what its login left (a cookie, its web storage or its address), "+
			"where the agent's browser would read it, so fillgate handed nothing over and will not log in to %s in a clean room for a day; %s",
			wording.FieldNoun(r.kind), r.service, inPageFix(r.service)), fill.ErrValueKept}
	}
	shown, err := r.cfg.Driven.HandOver(ctx, r.in, sess)
	r.lap("tab_handed_over", &t0)
	if err != nil {
		return fill.Handover{}, fmt.Errorf("the session could not be handed to the agent's browser: %w", err)
	}
	r.cfg.Log.Info("clean room: session handed over", "cookies", len(changes.Set), "removed", len(changes.Removed),
		"storage", !st.Empty(), "storage_dropped", storageNote, "origin", shown.Origin)
	return fill.Handover{
		TabOrigin:  shown.Origin,
		Cookies:    len(changes.Set),
		Storage:    !st.Empty(),
		LoginShown: shown.Origin == r.login && next == "" && count(shown, r.kind) > 0,
		Next:       next,
	}, nil
}

// ownLeft is what of sess the login made, not what the driving program
// put in: the cookies whose value the room did not copy in as it is, the
// web storage, and the final address without the query parameters (and
// the fragment) of the address the room opened. Looking for the value only there keeps
// the program from learning whether a list of guesses it planted holds
// the value, by seeing a handover refused; a guess the site copied
// elsewhere still is (fill bars the service after one such refusal).
func (r *room) ownLeft(sess websession.Session) websession.Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := sess
	out.Cookies.Set = nil
	for _, c := range sess.Cookies.Set {
		if was, ok := r.seeded[c.Key()]; ok && was.Value == c.Value {
			continue
		}
		out.Cookies.Set = append(out.Cookies.Set, c)
	}
	out.URL = withoutParams(sess.URL, r.opened)
	return out
}

// withoutParams is raw without the query parameters opened has too, and
// without its fragment when opened has the same.
func withoutParams(raw, opened string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	o, _ := url.Parse(opened)
	q := u.Query()
	if o != nil {
		for k, vs := range o.Query() {
			for _, v := range vs {
				q[k] = slices.DeleteFunc(q[k], func(x string) bool { return x == v })
			}
		}
	}
	u.RawQuery = q.Encode()
	if o != nil && o.Fragment == u.Fragment {
		u.Fragment, u.RawFragment = "", ""
	}
	return u.String()
}

// count is how many fields of kind s shows.
func count(s websession.Shown, kind string) int {
	if kind == fill.FieldOTP {
		return s.Code
	}
	return s.Password
}

// Close implements fill.Room: the tab, then the browser, then its profile.
func (r *room) Close() {
	r.closeOne.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.smu.Lock()
		clear(r.value)
		r.value = nil
		r.smu.Unlock()
		if r.cdp != nil {
			_ = r.cdp.Close()
		}
		r.tcancel()
		r.bcancel()
		r.acancel()
		killLeftovers(r.dir)
		browserproc.RemoveSingleton(r.dir)
		r.done()
		r.cfg.Log.Info("clean room closed")
	})
}
