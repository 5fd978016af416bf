package inpage

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// targetWatch records the page targets the browser destroys, from its
// target events.
type targetWatch struct {
	gone chan target.ID
}

func watchTargets(t testing.TB, bctx context.Context) *targetWatch {
	t.Helper()
	w := &targetWatch{gone: make(chan target.ID, 64)}
	chromedp.ListenBrowser(bctx, func(ev any) {
		if d, ok := ev.(*target.EventTargetDestroyed); ok {
			w.gone <- d.TargetID
		}
	})
	if _, err := chromedp.CallBrowser(bctx, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		t.Fatalf("discover targets: %v", err)
	}
	return w
}

// waitGone waits until the browser destroyed target id.
func (w *targetWatch) waitGone(t testing.TB, ctx context.Context, id target.ID, what string) {
	t.Helper()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		select {
		case g := <-w.gone:
			if g == id {
				return
			}
		case <-wait.Done():
			t.Fatalf("%s stayed open", what)
		}
	}
}

// storedPrompts is what the worker keeps in storage.session.
func storedPrompts(t testing.TB, w *worker) map[string]any {
	t.Helper()
	var stored map[string]any
	w.call(&stored, `function () { return chrome.storage.session.get(null); }`)
	return stored
}

// openPromptWindow has the fake host ask for a prompt window and returns
// its window id and its page target.
func openPromptWindow(t testing.TB, ctx, bctx context.Context, h *hostConn, id int, url string) (float64, *target.Info) {
	t.Helper()
	h.send(map[string]any{"id": id, "type": "open_prompt", "url": url})
	opened := h.expect(map[string]any{"id": id, "type": "prompt_opened"})
	win, _ := opened["window"].(float64)
	info, err := browser.WaitTarget(ctx, bctx, "page", url)
	if err != nil {
		t.Fatal(err)
	}
	return win, info
}

// TestPromptWindowsDieWithTheHost: the extension closes its prompt windows
// when the native port drops (the host died), and a worker started again
// closes those an earlier run left open. The windows' ids, and only they,
// are kept in storage.session.
func TestPromptWindowsDieWithTheHost(t *testing.T) {
	x := startHosted(t, testPages)
	ctx, srv, bctx, h := x.ctx, x.srv, x.bctx, x.h
	targets := watchTargets(t, bctx)
	win, popup := openPromptWindow(t, ctx, bctx, h, 1, srv.URL+"/password?prompt=1")
	w := attachWorker(t, ctx, bctx)
	if got := storedPrompts(t, w); fmt.Sprint(got) != fmt.Sprint(map[string]any{"prompts": []any{win}}) {
		t.Errorf("storage.session holds %v; want only the prompt window's id", got)
	}

	// The host dies: the port drops, and the prompt window goes with it.
	h.close()
	targets.waitGone(t, ctx, popup.TargetID, "the prompt window of a host that died")
	if got := storedPrompts(t, w); fmt.Sprint(got) != fmt.Sprint(map[string]any{"prompts": []any{}}) {
		t.Errorf("storage.session holds %v after the host died; want no prompt windows", got)
	}

	// The worker reconnects to a new host, which opens a prompt; then the
	// browser stops the worker (as it may when idle), so no one is left to
	// close the window. The worker started again closes it.
	h = greeted(t, ctx, x.hosts, "Chrome/")
	_, popup = openPromptWindow(t, ctx, bctx, h, 2, srv.URL+"/password?prompt=2")
	pages := openTab(t, bctx, srv.URL+"/password")
	if _, err := chromedp.Call(pages.ctx, serviceworker.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable the ServiceWorker domain: %v", err)
	}
	if _, err := chromedp.Call(pages.ctx, serviceworker.StopAllWorkers, cdp.Empty{}); err != nil {
		t.Fatalf("stop the service worker: %v", err)
	}
	waitNoWorker(t, ctx, bctx)
	if !targetOpen(t, bctx, popup.TargetID) {
		t.Fatalf("the prompt window closed with the worker; the start-up cleanup is not exercised")
	}
	// Anything the extension hears starts the worker again: here the
	// popup asking for its state.
	openTab(t, bctx, manifest.ExtensionOrigin+"popup.html")
	targets.waitGone(t, ctx, popup.TargetID, "a prompt window left from before the worker started")
}

// waitNoWorker waits until the extension's service worker is stopped.
func waitNoWorker(t testing.TB, ctx, bctx context.Context) {
	t.Helper()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := poll.Until(wait, 50*time.Millisecond, func() (bool, error) {
		infos, err := chromedp.Targets(bctx)
		if err != nil {
			t.Fatalf("targets: %v", err)
		}
		return !slices.ContainsFunc(infos, func(in *target.Info) bool {
			return in.Type == "service_worker" && in.URL == manifest.ExtensionOrigin+"sw.js"
		}), nil
	}); err != nil {
		t.Fatalf("the service worker did not stop: %v", err)
	}
}

// targetOpen reports whether target id is still open.
func targetOpen(t testing.TB, bctx context.Context, id target.ID) bool {
	t.Helper()
	infos, err := chromedp.Targets(bctx)
	if err != nil {
		t.Fatalf("targets: %v", err)
	}
	return slices.ContainsFunc(infos, func(in *target.Info) bool { return in.TargetID == id })
}
