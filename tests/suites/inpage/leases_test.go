package inpage

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestNoticesLeasesAndAccount plays the host over a real connectNative
// port: an inspect reports the account the form shows; a notify shows a
// real browser notification (the "notifications" permission) and is
// answered only then; the toolbar popup lists the host's leases, and its
// End button sends end_lease for that lease, while popup.html opened in a
// tab lists none and ends none.
func TestNoticesLeasesAndAccount(t *testing.T) {
	x := startHosted(t, accountPages)
	ctx, srv, bctx, h := x.ctx, x.srv, x.bctx, x.h
	h.send(map[string]any{"type": "host", "version": "9.8.7", "pid": 4242})

	tb := openTab(t, bctx, srv.URL+"/autocomplete")
	tb.focus("f")
	h.send(map[string]any{"id": 1, "type": "inspect"})
	h.expect(map[string]any{"id": 1, "type": "inspected", "account": "alice@example.com"})

	title := "fillgate is filling the password for 127.0.0.1"
	h.send(map[string]any{"id": 2, "type": "notify", "title": title, "message": "Asked by claude (pid 1), into " + srv.URL + "."})
	h.expect(map[string]any{"id": 2, "type": "notified"})
	w := attachWorker(t, ctx, bctx)
	var titles []string // Chromium tells the ids only
	w.call(&titles, `function () { return new Promise((resolve) => chrome.notifications.getAll((all) => resolve(Object.keys(all)))); }`)
	if len(titles) != 1 {
		t.Errorf("the browser shows %d notifications, want the one", len(titles))
	}
	h.send(map[string]any{"id": 3, "type": "notify"})
	h.expect(map[string]any{"id": 3, "type": "error", "error": "bad_request"})

	until := time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339)
	h.send(map[string]any{"type": "leases", "leases": []map[string]any{
		{"id": "l1", "agent": "claude (pid 1) via fillgate fill", "service": "127.0.0.1", "field": "password",
			"account": "alice@example.com", "origin": srv.URL, "until": until},
		{"id": "l0", "agent": "old", "service": "ended.test", "field": "password", "origin": srv.URL,
			"until": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)},
	}})
	// popup.html opened in a tab (as a program driving the browser can
	// open, script and click it) lists no lease and ends none: the host
	// hears nothing of it before the pong that follows.
	openTab(t, bctx, popupURL).unanswered(t)
	h.send(map[string]any{"id": 4, "type": "ping"})
	h.expect(map[string]any{"id": 4, "type": "pong"})

	pop := openPopup(t, ctx, bctx, w)
	if _, err := chromedp.Run(pop.ctx, chromedp.Poll[bool](`(() => {
		const list = document.getElementById("leases");
		return !document.getElementById("leasebox").hidden && list.children.length === 1 &&
			list.textContent.includes("127.0.0.1 · password as alice@example.com") && list.textContent.includes("claude (pid 1)");
	})()`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the popup does not list the live lease alone: %v", err)
	}
	pop.eval(`document.querySelector("#leases button").click(), true`)
	h.expect(map[string]any{"type": "end_lease", "lease": "l1"})
	if _, err := chromedp.Run(pop.ctx, chromedp.Poll[bool](`document.getElementById("leasebox").hidden`,
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the popup still lists the ended lease: %v", err)
	}
}
