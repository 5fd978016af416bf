package cdp

import (
	"context"
	"errors"
	"slices"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/secretjson"
)

// In-page refusal reasons (PROTOCOL.md section 2) this package reports
// itself, before the in-page insert runs.
const (
	reasonTabGone       = "tab_gone"
	reasonOriginChanged = "origin_changed"
	reasonFrameChanged  = "frame_changed"
	reasonElementGone   = "element_gone"
	reasonInsertFailed  = "insert_failed"
	reasonNotUsable     = "not_usable"
	reasonPageLeft      = "page_left"
)

// Insert implements fill.Browser. It brings the inspected tab to the
// front, walks the focus chain again in the isolated worlds kept from
// Inspect (a frame that navigated has lost its world: origin_changed, or
// element_gone when it is still the same origin), and then runs the
// in-page insert in the focused frame, which re-checks origin, element,
// kind, usability and the form's destinations, inserts, and (opt.Then
// submit) submits and leaves nothing, all in the same call. A document
// that goes away during that call took the value with it: the verdict
// says navigated. value is only read; the caller zeroes it.
func (b *Browser) Insert(ctx context.Context, in fill.Inspection, value []byte, opt fill.InsertOptions) (fill.Verdict, error) {
	then, err := fill.NormalizeThen(opt.Then)
	if err != nil {
		return fill.Verdict{}, err
	}
	b.mu.Lock()
	loc, ok := b.located[in.Tab]
	b.mu.Unlock()
	if !ok || in.Frame != in.Tab || in.Token != loc.token {
		return fill.Verdict{}, newError(b.ep, ReasonUnknownInspect, "", nil)
	}
	if !slices.Equal(in.Origins, loc.origins()) {
		return fill.Verdict{}, newError(b.ep, ReasonUnknownInspect, "", nil)
	}
	if loc.page.gone() {
		return fill.Verdict{Reason: reasonTabGone}, nil
	}
	// The prompt may have taken the focus; give it back to the tab. This
	// does not move the page's focused element.
	if _, err := cdp.Call(ctx, loc.page.target, page.BringToFront, cdp.Empty{}); err != nil {
		if errors.Is(loc.page.wrap(err), errSessionGone) {
			return fill.Verdict{Reason: reasonTabGone}, nil
		}
		return fill.Verdict{}, b.locateError(ctx, err)
	}

	// A field in a frame: the focus must still lead down to it through the
	// same origins. In the top frame the in-page insert checks its origin
	// and that the field still has the focus itself, in the same call.
	if len(loc.chain) > 1 {
		if reason, err := b.recheck(ctx, loc); err != nil || reason != "" {
			if err != nil {
				return fill.Verdict{}, b.locateError(ctx, err)
			}
			return fill.Verdict{Reason: reason}, nil
		}
	}

	f := loc.focused()
	nonce := newToken()
	meta := insertArg{Token: loc.token, Origin: f.origin, Kind: in.Field.Kind, Form: in.Form, Then: then,
		Binding: markBinding(b.world), Nonce: nonce}
	res, err := f.world.insert(ctx, b.js, meta, value, f.roots)
	marked := f.world.sess.contexts.marked(nonce)
	switch {
	case errors.Is(err, errLeftMidCall):
		// The page left during the call: before the insert (it inserts
		// nothing into a page that began to leave) unless it marked it.
		if !marked {
			return fill.Verdict{Reason: reasonPageLeft}, nil
		}
		return fill.Verdict{Inserted: true, Matched: true, Navigated: true, Unconfirmed: true}, nil
	case errors.Is(err, errContextGone):
		return fill.Verdict{Reason: b.navReason(ctx, loc, len(loc.chain)-1)}, nil
	case errors.Is(err, errSessionGone):
		if loc.page.gone() {
			return fill.Verdict{Reason: reasonTabGone}, nil
		}
		return fill.Verdict{Reason: reasonOriginChanged}, nil
	case errors.Is(err, errThrew):
		return fill.Verdict{Reason: reasonInsertFailed}, nil
	case errors.Is(err, secretjson.ErrNotUTF8):
		return fill.Verdict{}, newError(b.ep, ReasonValueNotUTF8, "", nil)
	case err != nil:
		// Never quote err: a browser error could echo parameters.
		return fill.Verdict{}, b.insertError(ctx)
	}
	return fill.Verdict{
		Inserted: res.Inserted, Matched: res.Matched, Reason: res.Reason,
		Submitted: res.Submitted, Navigated: res.Navigated, Cleared: res.Cleared, Remains: res.Remains,
		Stopped: res.Stopped, StoppedBy: res.StoppedBy,
	}, nil
}

// insertError reports a failed insert call without its underlying error.
func (b *Browser) insertError(ctx context.Context) error {
	select {
	case <-b.browser.LostConnection:
		return newError(b.ep, ReasonGone, "", nil)
	default:
	}
	if ctx.Err() != nil {
		return newError(b.ep, ReasonTimeout, "", ctx.Err())
	}
	return newError(b.ep, ReasonProtocol, "the insert call failed", nil)
}

// recheck walks the chain again: each frame must still have its origin,
// and the focus must still lead through the same frames to the focused
// one. It returns an in-page style reason when something changed. Its
// probes remember nothing (no token), so they judge only frame elements:
// the in-page insert judges the field itself.
func (b *Browser) recheck(ctx context.Context, loc *location) (string, error) {
	const token = ""
	for i, lv := range loc.chain {
		if lv.world.sess.gone() {
			if loc.page.gone() {
				return reasonTabGone, nil
			}
			return reasonOriginChanged, nil
		}
		pr, err := lv.world.probe(ctx, b.js, token, lv.roots, true)
		switch {
		case errors.Is(err, errContextGone):
			return b.navReason(ctx, loc, i), nil
		case errors.Is(err, errSessionGone):
			if loc.page.gone() {
				return reasonTabGone, nil
			}
			return reasonOriginChanged, nil
		case err != nil:
			return "", err
		}
		if pr.Origin != lv.origin {
			return reasonOriginChanged, nil
		}
		last := i == len(loc.chain)-1
		if last {
			if pr.ActiveIsFrame {
				return reasonFrameChanged, nil
			}
			return "", nil
		}
		if !pr.ActiveIsFrame {
			return reasonFrameChanged, nil
		}
		if pr.Field.Problem != "" {
			// The frame element on the way down is now hidden, tiny,
			// transparent or covered.
			return reasonNotUsable, nil
		}
		child, err := lv.world.activeChild(ctx, b.js, lv.roots)
		if err != nil || child != loc.chain[i+1].world.frameID {
			return reasonFrameChanged, nil
		}
	}
	return "", nil
}

// navReason says why the world of chain level i is gone: the frame now
// shows another origin (origin_changed), or the same origin in a new
// document (element_gone).
func (b *Browser) navReason(ctx context.Context, loc *location, i int) string {
	lv := loc.chain[i]
	if loc.page.gone() {
		return reasonTabGone
	}
	if lv.world.sess.gone() {
		return reasonOriginChanged
	}
	b.forgetWorld(lv.world)
	w, err := b.worldFor(ctx, lv.world.sess, lv.world.frameID)
	if err != nil {
		return reasonOriginChanged
	}
	pr, err := w.probe(ctx, b.js, newToken(), nil, false)
	if err != nil || pr.Origin != lv.origin {
		return reasonOriginChanged
	}
	return reasonElementGone
}
