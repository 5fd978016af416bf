package inpage

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// hosted is Chromium with the extension and this test as its native
// host, and pages served to it.
type hosted struct {
	ctx   context.Context
	srv   *httptest.Server
	c     *browser.Chromium
	bctx  context.Context
	hosts <-chan *hostConn // each later connection of the extension
	h     *hostConn        // the extension's first connection, greeted
}

// startHosted serves pages, starts Chromium with the extension and the
// fake native host installed, and waits for the extension's hello.
func startHosted(t testing.TB, pages map[string]string) *hosted {
	t.Helper()
	x := &hosted{ctx: testContext(t), srv: serve(t, pages)}
	sock, ln := listenHost(t)
	x.hosts = acceptHosts(t, x.ctx, ln)
	profile := t.TempDir()
	// Chromium started with --user-data-dir reads hosts from its NativeMessagingHosts.
	installFakeHost(t, filepath.Join(profile, "NativeMessagingHosts"), "allowed_origins", manifest.ExtensionOrigin)
	x.c = browser.StartChromium(t, x.ctx, browser.ChromiumOptions{
		UserDataDir: profile,
		Extensions:  []string{extensionDir(t)},
		Env:         append(browser.BaseEnv(t.TempDir()), fakeHostEnv+"="+sock),
	})
	x.bctx = x.c.Attach(t, x.ctx)
	x.h = greeted(t, x.ctx, x.hosts, "Chrome/")
	return x
}

// focusedTab opens path in a new tab, focuses its field #f and waits
// until the page's animations have finished.
func (x *hosted) focusedTab(t testing.TB, path string) *tab {
	t.Helper()
	tb := openTab(t, x.bctx, x.srv.URL+path)
	tb.focus("f")
	tb.settle()
	return tb
}

// TestNativeMessaging plays the native host over a real connectNative port:
// the extension says hello, answers requests by id, reports the prompt
// window closing and the pause switch, feeds the toolbar popup (and
// nothing to popup.html opened in a tab), and reconnects when the host
// goes away.
func TestNativeMessaging(t *testing.T) {
	x := startHosted(t, testPages)
	ctx, srv, c, bctx, h := x.ctx, x.srv, x.c, x.bctx, x.h
	secret := leakscan.NewSecret(t)
	defer clear(secret)

	h.send(map[string]any{"type": "host", "version": "9.8.7", "pid": 4242})
	h.send(map[string]any{"id": 1, "type": "ping"})
	h.expect(map[string]any{"id": 1, "type": "pong"})

	tb := openTab(t, bctx, srv.URL+"/password")
	tb.focus("f")
	h.send(map[string]any{"id": 2, "type": "inspect"})
	in := h.expect(map[string]any{"id": 2, "type": "inspected", "frame": 0})

	promptURL := srv.URL + "/password?prompt"
	h.send(map[string]any{"id": 3, "type": "open_prompt", "url": promptURL})
	opened := h.expect(map[string]any{"id": 3, "type": "prompt_opened"})
	popup, err := browser.WaitTarget(ctx, bctx, "page", promptURL)
	if err != nil {
		t.Fatal(err)
	}
	// The human closes the prompt window.
	if _, err := chromedp.CallBrowser(bctx, target.CloseTarget, target.CloseTargetParams{TargetID: popup.TargetID}); err != nil {
		t.Fatalf("close the prompt: %v", err)
	}
	h.expect(map[string]any{"type": "prompt_closed", "window": opened["window"]})

	h.send(map[string]any{"id": 4, "type": "insert", "tab": in["tab"], "frame": in["frame"], "token": in["token"],
		"origins": in["origins"], "kind": "password", "form": in["form"], "then": "none", "value": string(secret)})
	done := h.expect(map[string]any{"id": 4, "type": "inserted", "matched": true, "remains": true})
	if len(done) != 4 {
		t.Errorf("the insert reply has extra fields: %v", done)
	}
	if !tb.holds("f", secret) {
		t.Fatal("value differed")
	}

	// The popup shows the host, the history and the pause switch.
	h.send(map[string]any{"type": "outcome", "time": time.Now().UTC().Format(time.RFC3339), "service": "127.0.0.1",
		"origin": srv.URL, "status": "ok"})
	// popup.html opened in a tab (as a program driving the browser can
	// open, script and click it) shows none of it and its pause switch
	// pauses nothing: the host hears nothing before the pong that follows.
	w := attachWorker(t, ctx, bctx)
	openTab(t, bctx, popupURL).unanswered(t)
	h.send(map[string]any{"id": 5, "type": "ping"})
	h.expect(map[string]any{"id": 5, "type": "pong"})
	var paused bool
	w.call(&paused, `function () { return chrome.storage.local.get("paused").then((s) => s.paused === true); }`)
	if paused {
		t.Fatal("popup.html in a tab paused the fills")
	}

	pop := openPopup(t, ctx, bctx, w)
	if _, err := chromedp.Run(pop.ctx, chromedp.Poll[bool](`(($) => $("conn").textContent.includes("9.8.7") &&
		$("recent").children.length === 1 && $("recent").textContent.includes(`+"`"+srv.URL+"`"+`) && $("empty").hidden)
		((id) => document.getElementById(id))`,
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the popup does not show the host and the outcome: %v", err)
	}
	pop.eval(`document.getElementById("pause").click(), true`)
	h.expect(map[string]any{"type": "paused", "paused": true})
	var stored map[string]any
	w.call(&stored, `function () { return chrome.storage.local.get(null); }`)
	// The pause switch and the profile's random instance id, nothing else.
	instance, _ := stored["instance"].(string)
	if len(stored) != 2 || stored["paused"] != true || !uuidRE.MatchString(instance) {
		t.Errorf("storage.local holds %v; want only paused: true and a random instance id", stored)
	}

	// A page of the extension in a tab writes the switch off in storage,
	// as any of its pages can: the worker does not follow, and the host
	// hears nothing before the pong that follows.
	openTab(t, bctx, popupURL).eval(`chrome.storage.local.set({ paused: false }), true`)
	w.call(&stored, `function () { return new Promise((ok) => setTimeout(ok, 300)).then(() => chrome.storage.local.get(null)); }`)
	if stored["paused"] != false {
		t.Fatalf("the tab's write did not land (storage %v): the check below would prove nothing", stored)
	}
	h.send(map[string]any{"id": 6, "type": "ping"})
	h.expect(map[string]any{"id": 6, "type": "pong"})
	w.call(&paused, `function () { return paused; }`)
	if !paused {
		t.Fatal("a page of the extension in a tab switched the pause off by writing storage")
	}

	// The host goes away; the extension reconnects and says hello again.
	// The host's answer is the pause switch it keeps: the worker takes it.
	h.close()
	h = nextHost(t, ctx, x.hosts)
	h.expect(map[string]any{"type": "hello", "paused": true})
	h.send(map[string]any{"type": "host", "version": "9.8.7", "pid": 4242, "paused": true})
	h.send(map[string]any{"id": 7, "type": "ping"})
	h.expect(map[string]any{"id": 7, "type": "pong"})
	w.call(&stored, `function () { return chrome.storage.local.get(null); }`)
	if stored["paused"] != true {
		t.Errorf("the worker did not keep the host's pause switch: storage %v", stored)
	}

	c.Stop()
	leakscan.Bytes(t, secret, "the browser's output", []byte(c.Output()))
	leakscan.Dirs(t, secret, c.UserDataDir)
}

// BenchmarkNativeRoundTrip measures the extension path of one fill without
// the prompt: over a real connectNative port the host asks inspect, then
// insert, and the value lands in the focused field of a real page. It
// reports the median as well as the mean.
func BenchmarkNativeRoundTrip(b *testing.B) {
	x := startHosted(b, testPages)
	h := x.h
	tb := x.focusedTab(b, "/password")
	secret := leakscan.NewSecret(b)
	defer clear(secret)

	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		h.send(map[string]any{"id": 2 * i, "type": "inspect"})
		in := h.expect(map[string]any{"id": 2 * i, "type": "inspected"})
		h.send(map[string]any{"id": 2*i + 1, "type": "insert", "tab": in["tab"], "frame": in["frame"], "token": in["token"],
			"origins": in["origins"], "kind": "password", "form": in["form"], "then": "none", "value": string(secret)})
		h.expect(map[string]any{"id": 2*i + 1, "type": "inserted", "matched": true})
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median/op")
	if !tb.holds("f", secret) {
		b.Fatal("value differed")
	}
}

// uuidRE matches crypto.randomUUID()'s output.
var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
