package promptwatch

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// CDP watches the prompts of the Chromium that bctx (browser.Attach's
// context) is connected to, from its target events: a prompt is a page
// target; its id is the target's.
func CDP(t testing.TB, bctx context.Context, isPrompt func(url string) bool) *Watch {
	t.Helper()
	w := New(isPrompt)
	if err := chromedp.ListenBrowser(bctx, func(ev any) {
		switch ev := ev.(type) {
		case *target.EventTargetCreated:
			if ev.TargetInfo.Type == "page" {
				w.Saw(string(ev.TargetInfo.TargetID), ev.TargetInfo.URL)
			}
		case *target.EventTargetInfoChanged:
			if ev.TargetInfo.Type == "page" {
				w.Saw(string(ev.TargetInfo.TargetID), ev.TargetInfo.URL)
			}
		case *target.EventTargetDestroyed:
			w.Closed(string(ev.TargetID))
		}
	}); err != nil {
		t.Fatalf("listen to the browser's targets: %v", err)
	}
	if _, err := chromedp.CallBrowser(bctx, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		t.Fatalf("discover targets: %v", err)
	}
	return w
}

// Ready is a JavaScript expression that holds once a prompt page says it
// can take an answer, as its window title tells the person: the page has
// loaded, its script has put the focus where the person types, and the
// browser has shown it (Chromium drops the keys a page is sent before its
// first paint). A test that types into a prompt waits for it first.
const Ready = `document.readyState === "complete" && document.title === document.getElementById("answer")?.dataset.title`

// AttachCDP waits for prompt number n (0-based) of the Chromium that bctx
// is connected to, which w watches, attaches to it (browser.AttachTarget:
// it also comes to the front) and waits until ready, a boolean
// expression that may await a promise, holds in its page. The page may
// still be loading, so an evaluation that fails is tried again until ctx
// ends. Cancelling the returned context detaches and leaves the window
// open.
func (w *Watch) AttachCDP(ctx, bctx context.Context, n int, ready string) (string, context.Context, context.CancelFunc, error) {
	id, err := w.Next(ctx, n)
	if err != nil {
		return "", nil, nil, err
	}
	pctx, cancel, err := browser.AttachTarget(ctx, bctx, target.ID(id))
	if err != nil {
		return "", nil, nil, fmt.Errorf("attach to the prompt: %w", err)
	}
	if err := poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		return chromedp.Run(pctx, chromedp.Evaluate[bool](ready, chromedp.EvalAwaitPromise))
	}); err != nil {
		cancel()
		return "", nil, nil, fmt.Errorf("the prompt never got ready: %w", err)
	}
	return id, pctx, cancel, nil
}

// BiDi watches the prompts of Firefox ff from its browsing-context
// events: a prompt is a top-level browsing context (a tab or a popup
// window); its id is the context's. Only BiDi reports when a prompt has
// loaded (Watch.WaitLoaded). Start it before the extension is installed:
// in Firefox ESR 153 a session that subscribed after the add-on was
// installed heard nothing of the popup windows the add-on opened.
func BiDi(t testing.TB, ctx context.Context, ff *browser.Firefox, isPrompt func(url string) bool) *Watch {
	t.Helper()
	w := New(isPrompt)
	var top sync.Map // the top-level contexts, from their creation
	ff.Listen(func(e browser.Event) {
		var p struct {
			Context string           `json:"context"`
			URL     string           `json:"url"`
			Parent  *json.RawMessage `json:"parent"`
		}
		if json.Unmarshal(e.Params, &p) != nil {
			return
		}
		switch e.Method {
		case "browsingContext.contextCreated":
			if p.Parent == nil || string(*p.Parent) == "null" {
				top.Store(p.Context, true)
				w.Saw(p.Context, p.URL)
			}
		case "browsingContext.navigationStarted":
			if _, ok := top.Load(p.Context); ok {
				w.Saw(p.Context, p.URL)
			}
		case "browsingContext.load":
			if _, ok := top.Load(p.Context); ok {
				w.Loaded(p.Context, p.URL)
			}
		case "browsingContext.contextDestroyed":
			w.Closed(p.Context)
		}
	})
	if err := ff.Subscribe(ctx, "browsingContext.contextCreated", "browsingContext.contextDestroyed",
		"browsingContext.navigationStarted", "browsingContext.load"); err != nil {
		t.Fatalf("subscribe to the browser's browsing contexts: %v", err)
	}
	return w
}

// FinalState waits, at most 30 s and while ctx lasts, until the prompt
// page in the Chromium tab shows a final state (its script sets body's
// data-state: "sent", "cancelled", …) and returns it.
func FinalState(ctx, tab context.Context) (string, error) {
	wait, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	got, err := chromedp.Run(wait, chromedp.Evaluate[string](`new Promise((resolve) => {
		const done = () => document.body && document.body.dataset.state;
		if (done()) return resolve(done());
		new MutationObserver(() => { if (done()) resolve(done()); })
			.observe(document.documentElement, { attributes: true, subtree: true });
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		return "", fmt.Errorf("the prompt page never reached a final state: %w", err)
	}
	return got, nil
}
