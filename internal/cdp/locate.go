package cdp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/fillgate/fillgate/internal/fill"
)

// maxFrameDepth bounds the focus chain walk.
const maxFrameDepth = 16

// level is one frame of a focus chain: where it lives and what its probe
// said.
type level struct {
	world  *world
	origin string
	probe  probeResult
	roots  []runtime.RemoteObjectID // closed shadow roots on the way to the focus
}

// location is what Inspect found and Insert re-checks: the page target, the
// chain of frames from the top to the focused one, and the token the
// focused frame's probe remembered its element under.
type location struct {
	page  *session
	chain []level // top first
	token string
}

func (l *location) focused() level { return l.chain[len(l.chain)-1] }

// frameProblem is the first problem of a frame element on the way down to
// the focused frame (a hidden, tiny, transparent or covered iframe), as the
// extension reports it.
func (l *location) frameProblem() string {
	for _, lv := range l.chain[:len(l.chain)-1] {
		if lv.probe.Field.Problem != "" {
			return lv.probe.Field.Problem
		}
	}
	return ""
}

// problemBackground is the in-page problem of a page that is not shown
// (a background tab or a minimised window).
const problemBackground = "background"

// problem is the first problem of the chain's frame elements, else the
// focused field's.
func (l *location) problem() string {
	if p := l.frameProblem(); p != "" {
		return p
	}
	return l.focused().probe.Field.Problem
}

// relocate brings loc's tab to the front and follows its focus again.
func (b *Browser) relocate(ctx context.Context, loc *location, infos []*target.Info) (*location, error) {
	if _, err := cdp.Call(ctx, loc.page.target, page.BringToFront, cdp.Empty{}); err != nil {
		return nil, loc.page.wrap(err)
	}
	return b.locate(ctx, loc.page.id, infos, true)
}

// origins lists the chain's origins, focused first.
func (l *location) origins() []string {
	out := make([]string, 0, len(l.chain))
	for i := len(l.chain) - 1; i >= 0; i-- {
		out = append(out, l.chain[i].origin)
	}
	return out
}

// Inspect implements fill.Browser: it picks the page target (Options.Tab,
// the only page, or the one page whose focused frame matches req.Service),
// follows the focus from its top frame through every frame, in-process or
// out-of-process, and returns what the in-page probe saw in the focused
// frame. A tab choice that fails is an *Error with Status refused.
func (b *Browser) Inspect(ctx context.Context, req fill.Request) (fill.Inspection, error) {
	if req.Tab != nil || req.Frame != nil {
		return fill.Inspection{}, newError(b.ep, ReasonNumericTab, "", nil)
	}
	infos, err := b.targets(ctx)
	if err != nil {
		return fill.Inspection{}, err
	}
	pages := b.userPages(infos)
	if b.opts.Tab != "" {
		i := slices.IndexFunc(pages, func(t *target.Info) bool { return string(t.TargetID) == b.opts.Tab })
		if i < 0 {
			return fill.Inspection{}, newError(b.ep, ReasonTabNotFound, "", nil)
		}
		pages = pages[i : i+1]
		if err := b.checkActive(ctx, pages[0].TargetID); err != nil {
			return fill.Inspection{}, err
		}
	}
	if len(pages) == 0 {
		return fill.Inspection{}, newError(b.ep, ReasonNoPageTarget, "", nil)
	}

	var loc *location
	if len(pages) == 1 {
		loc, err = b.locate(ctx, pages[0].TargetID, infos, false)
		if err != nil {
			return fill.Inspection{}, b.locateError(ctx, err)
		}
	} else {
		loc, err = b.choose(ctx, pages, infos, req)
		if err != nil {
			return fill.Inspection{}, err
		}
	}
	if loc.problem() == problemBackground {
		// The chosen tab is not in front: bring it there, as Insert does,
		// and look again (the person sees which page asks).
		if loc, err = b.relocate(ctx, loc, infos); err != nil {
			return fill.Inspection{}, b.locateError(ctx, err)
		}
	}

	h := b.handle()
	b.mu.Lock()
	b.located[h] = loc
	b.mu.Unlock()
	field := loc.focused().probe.Field
	if p := loc.frameProblem(); p != "" {
		field.Problem = p
	}
	return fill.Inspection{
		Tab:     h,
		Frame:   h,
		Token:   loc.token,
		Origins: loc.origins(),
		Field:   field,
		Form:    loc.focused().probe.Form,
		Account: loc.focused().probe.Account,
		// fillgate's own session is attached, and so may be whatever
		// else holds the endpoint.
		Watched: true,
	}, nil
}

// visibleJS reports whether the document is visible, through the
// getter of the isolated world it runs in, which the page cannot replace.
const visibleJS = `function () {
  return Reflect.apply(Object.getOwnPropertyDescriptor(Document.prototype, "visibilityState").get, document, []) === "visible";
}`

// checkActive refuses the tab pinned with Options.Tab unless it is the
// active tab of its window, before anything in it is probed: a pin only
// narrows the choice, and a background tab's origin and field stay
// unnamed. CDP has no notion of a window's active tab; a page is
// "visible" (document.visibilityState, read in fillgate's isolated world
// of the top frame) only while it is the tab in front of its window and
// the window is not minimised, which is what the extension's tab.active
// means (PROTOCOL.md, section 2).
func (b *Browser) checkActive(ctx context.Context, id target.ID) error {
	s, err := b.attach(ctx, id)
	if err != nil {
		return b.locateError(ctx, err)
	}
	tree, err := cdp.Call(ctx, s.target, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return b.locateError(ctx, s.wrap(err))
	}
	if tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return newError(b.ep, ReasonProtocol, "the page has no frame tree", nil)
	}
	visible := func() (*runtime.RemoteObject, error) {
		w, err := b.worldFor(ctx, s, tree.FrameTree.Frame.ID)
		if err != nil {
			return nil, err
		}
		obj, err := w.call(ctx, visibleJS, "visible", nil, true, nil)
		if errors.Is(err, errContextGone) {
			b.forgetWorld(w) // the page navigated since the world was made
		}
		return obj, err
	}
	obj, err := visible()
	if errors.Is(err, errContextGone) {
		obj, err = visible()
	}
	if err != nil {
		return b.locateError(ctx, err)
	}
	if string(obj.Value) != "true" {
		b.release(s)
		return newError(b.ep, ReasonTabNotActive, "", nil)
	}
	return nil
}

// userPages keeps the page targets that are the user's: not a prompt tab
// this Browser opened.
func (b *Browser) userPages(infos []*target.Info) []*target.Info {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*target.Info
	for _, t := range infos {
		if t.Type != "page" {
			continue
		}
		if _, ours := b.prompts[t.TargetID]; ours {
			continue
		}
		out = append(out, t)
	}
	return out
}

// choose probes every web page target and keeps the one whose focused
// frame matches the service; a tie is broken by the focused field being
// the kind asked for. Candidates not chosen are detached.
func (b *Browser) choose(ctx context.Context, pages, infos []*target.Info, req fill.Request) (*location, error) {
	type candidate struct {
		info *target.Info
		loc  *location
		err  error
	}
	cands := make([]candidate, 0, len(pages))
	for _, p := range pages {
		if isWebURL(p.URL) {
			cands = append(cands, candidate{info: p})
		}
	}
	if len(cands) == 0 {
		return nil, newError(b.ep, ReasonNoMatch, "candidates: "+strings.Join(originsOf(pages), ", "), nil)
	}

	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := range cands {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cands[i].loc, cands[i].err = b.locate(ctx, cands[i].info.TargetID, infos, false)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		for _, c := range cands {
			if c.loc != nil {
				b.release(c.loc.page)
			}
		}
		return nil, newError(b.ep, ReasonTimeout, "", ctx.Err())
	}

	field, _ := fill.NormalizeField(req.Field)
	var matches, kindMatches []int
	var seen []string
	anyField := false
	for i, c := range cands {
		if c.loc == nil {
			seen = append(seen, originOfURL(c.info.URL))
			continue
		}
		f := c.loc.focused()
		seen = append(seen, f.origin)
		if f.probe.Field.Kind != fill.FieldNone {
			anyField = true
		}
		if hostMatches(f.origin, req.Service) {
			matches = append(matches, i)
			if f.probe.Field.Kind == field {
				kindMatches = append(kindMatches, i)
			}
		}
	}
	chosen := -1
	switch {
	case len(matches) == 1:
		chosen = matches[0]
	case len(kindMatches) == 1:
		chosen = kindMatches[0]
	}
	for i, c := range cands {
		if i != chosen && c.loc != nil {
			b.release(c.loc.page)
		}
	}
	detail := "candidates: " + strings.Join(dedupe(seen), ", ")
	switch {
	case chosen >= 0:
		return cands[chosen].loc, nil
	case !anyField:
		return nil, newError(b.ep, ReasonNoFocusedField, detail, nil)
	case len(matches) > 1:
		return nil, newError(b.ep, ReasonAmbiguous, detail, nil)
	default:
		return nil, newError(b.ep, ReasonNoMatch, detail, nil)
	}
}

// locateError turns a failure to follow the focus into an *Error.
func (b *Browser) locateError(ctx context.Context, err error) error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case ctx.Err() != nil:
		return newError(b.ep, ReasonTimeout, "", ctx.Err())
	case errors.Is(err, errSessionGone):
		return newError(b.ep, ReasonNoPageTarget, "the tab went away", err)
	case errors.Is(err, errThrew):
		return newError(b.ep, ReasonProtocol, "the in-page function threw", err)
	case errors.Is(err, errFrameNotFound):
		return newError(b.ep, ReasonFrameNotFound, "", err)
	}
	return b.transportError(ctx, err)
}

// errFrameNotFound reports a focused frame element whose frame cannot be
// reached.
var errFrameNotFound = errors.New("the focused frame cannot be reached")

// locate attaches to the page target id and follows the focus chain from
// its top frame; shown as for walk.
func (b *Browser) locate(ctx context.Context, id target.ID, infos []*target.Info, shown bool) (*location, error) {
	s, err := b.attach(ctx, id)
	if err != nil {
		return nil, err
	}
	tree, err := cdp.Call(ctx, s.target, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, s.wrap(err)
	}
	if tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return nil, errors.New("the page has no frame tree")
	}
	token := newToken()
	chain, err := b.walk(ctx, s, tree.FrameTree.Frame.ID, token, infos, shown)
	if err != nil {
		return nil, err
	}
	return &location{page: s, chain: chain, token: token}, nil
}

// walk probes frameID on s and, while the focused element is a frame
// element, steps into that frame. shown: the tab was just brought to the
// front.
func (b *Browser) walk(ctx context.Context, s *session, frameID cdp.FrameID, token string, infos []*target.Info, shown bool) ([]level, error) {
	var chain []level
	for range maxFrameDepth {
		w, err := b.worldFor(ctx, s, frameID)
		if err != nil {
			return nil, err
		}
		pr, err := w.probe(ctx, b.js, token, nil, shown)
		if errors.Is(err, errContextGone) {
			// The frame navigated since the world was made: make a new one.
			b.forgetWorld(w)
			if w, err = b.worldFor(ctx, s, frameID); err == nil {
				pr, err = w.probe(ctx, b.js, token, nil, shown)
			}
		}
		var roots []runtime.RemoteObjectID
		if err == nil && pr.ClosedHost {
			roots, pr, err = w.pierce(ctx, b.js, token, pr, shown)
		}
		if err != nil {
			return nil, err
		}
		chain = append(chain, level{world: w, origin: pr.Origin, probe: pr, roots: roots})
		if !pr.ActiveIsFrame {
			return chain, nil
		}
		child, err := w.activeChild(ctx, b.js, roots)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errFrameNotFound, err)
		}
		s, frameID, err = b.frameSession(ctx, s, child, infos)
		if err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%w: frames nested deeper than %d", errFrameNotFound, maxFrameDepth)
}

// frameSession returns the session that holds frame child of a frame on
// s: s itself for an in-process frame, or the out-of-process iframe's own
// target (its target id is the frame id).
func (b *Browser) frameSession(ctx context.Context, s *session, child cdp.FrameID, infos []*target.Info) (*session, cdp.FrameID, error) {
	isOOPIF := func(infos []*target.Info) bool {
		return slices.ContainsFunc(infos, func(t *target.Info) bool {
			return t.Type == "iframe" && string(t.TargetID) == string(child)
		})
	}
	if !isOOPIF(infos) {
		// The list may predate the frame: ask again before deciding.
		fresh, err := b.targets(ctx)
		if err != nil {
			return nil, "", err
		}
		if !isOOPIF(fresh) {
			return s, child, nil
		}
	}
	os, err := b.attach(ctx, target.ID(child))
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", errFrameNotFound, err)
	}
	return os, child, nil
}

// worldFor returns the isolated world of frameID, creating it on s.
func (b *Browser) worldFor(ctx context.Context, s *session, frameID cdp.FrameID) (*world, error) {
	b.mu.Lock()
	w, ok := b.worlds[frameID]
	b.mu.Unlock()
	if ok && w.sess == s && !s.gone() {
		return w, nil
	}
	w, err := newWorld(ctx, s, frameID, b.world)
	if err != nil {
		return nil, s.wrap(err)
	}
	b.mu.Lock()
	b.worlds[frameID] = w
	b.mu.Unlock()
	return w, nil
}

// forgetWorld drops w from the cache.
func (b *Browser) forgetWorld(w *world) {
	b.mu.Lock()
	if b.worlds[w.frameID] == w {
		delete(b.worlds, w.frameID)
	}
	b.mu.Unlock()
}

// hostMatches reports whether origin's host is service or a subdomain of
// it, on the service's port when it names one (host:port, [v6]:port). It
// only picks a tab; the policy makes the real decision.
func hostMatches(origin, service string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	svc := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(service), "."))
	if h, port, err := net.SplitHostPort(svc); err == nil {
		p := u.Port()
		if p == "" {
			p = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
		if p != port {
			return false
		}
		svc = h
	}
	return svc != "" && (host == svc || strings.HasSuffix(host, "."+svc))
}

// isWebURL reports whether a target's URL is an http(s) page.
func isWebURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// originOfURL is scheme://host[:port] of a URL, never its path or query.
func originOfURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "null"
	}
	if u.Host == "" {
		return u.Scheme + ":"
	}
	return u.Scheme + "://" + u.Host
}

// originsOf lists the origins of the targets' URLs.
func originsOf(infos []*target.Info) []string {
	out := make([]string, 0, len(infos))
	for _, t := range infos {
		out = append(out, originOfURL(t.URL))
	}
	return dedupe(out)
}

// dedupe drops repeated strings, keeping the first order.
func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// containsFold reports whether s contains sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
