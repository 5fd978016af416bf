package inpage

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
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

// goneAlready reports whether the browser has destroyed target id by now,
// without waiting (it takes the events it reads).
func (w *targetWatch) goneAlready(id target.ID) bool {
	for {
		select {
		case g := <-w.gone:
			if g == id {
				return true
			}
		default:
			return false
		}
	}
}

// workerStopped returns a channel closed when the ServiceWorker domain,
// enabled on the page target ctx, reports the extension's worker stopped.
func workerStopped(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	var once sync.Once
	_ = chromedp.Listen(ctx, func(ev any) {
		up, ok := ev.(*serviceworker.EventWorkerVersionUpdated)
		if !ok {
			return
		}
		for _, v := range up.Versions {
			if v.ScriptURL == manifest.ExtensionOrigin+"sw.js" && v.RunningStatus == serviceworker.VersionRunningStatusStopped {
				once.Do(func() { close(done) })
			}
		}
	})
	return done
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
	stopped := workerStopped(pages.ctx)
	if _, err := chromedp.Call(pages.ctx, serviceworker.StopAllWorkers, cdp.Empty{}); err != nil {
		t.Fatalf("stop the service worker: %v", err)
	}
	// The worker's stop, from the ServiceWorker domain's events: any tab
	// event (the page above still loading, on a loaded machine) starts it
	// again at once (passkeys.js listens to tabs.onUpdated), so a poll for
	// "no worker running" could miss the moment it was stopped. If such an
	// event started it again, the worker that started has run the same
	// cleanup; if the cleanup did not close the window, nothing will.
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the service worker did not stop")
	}
	if targets.goneAlready(popup.TargetID) {
		t.Fatalf("the prompt window closed with the worker; the start-up cleanup is not exercised")
	}
	// Anything the extension hears starts the worker again (here
	// popup.html, opened in a tab, asking for its state, which the worker
	// does not answer a tab but still wakes for; unless a tab event did
	// already): the worker that starts closes the window left from before.
	openTab(t, bctx, popupURL)
	targets.waitGone(t, ctx, popup.TargetID, "a prompt window left from before the worker started")
}
