package inpage

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/repo"
)

// extensionDir is the repository's extension/ directory, loaded unpacked.
func extensionDir(t testing.TB) string {
	t.Helper()
	return repo.Path("extension")
}

// worker is a CDP session on the extension's service worker.
type worker struct {
	t   testing.TB
	ctx context.Context
}

// attachWorker waits for the extension's service worker and attaches to it.
// An attached DevTools session also keeps the worker from idling out.
func attachWorker(t testing.TB, ctx, browserCtx context.Context) *worker {
	t.Helper()
	info, err := browser.WaitTarget(ctx, browserCtx, "service_worker", manifest.ExtensionOrigin)
	if err != nil {
		t.Fatalf("the extension's service worker did not start: %v", err)
	}
	if info.URL != manifest.ExtensionOrigin+"sw.js" {
		t.Fatalf("service worker at %s, want %ssw.js", info.URL, manifest.ExtensionOrigin)
	}
	wctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithTargetID(info.TargetID))
	t.Cleanup(cancel)
	// The worker's target exists before its script has run: wait until
	// the script has defined what the tests call.
	if err := poll.Until(ctx, 20*time.Millisecond, func() (bool, error) {
		return chromedp.Run(wctx, chromedp.Evaluate[bool](`typeof answer === "function" && typeof fillgateInPage === "function"`))
	}); err != nil {
		t.Fatalf("the extension's service worker never ran its script: %v", err)
	}
	return &worker{t: t, ctx: wctx}
}

// call calls the function declaration fn with args in the worker, awaits

// stopHostRetries stops the worker's attempts to reach a native host, for
// a test that stands in for the host itself. No host is installed, so each
// attempt's port ends at once, and the extension closes every prompt
// window and lets every waiting passkey call fall through when its port
// ends (they belong to the host that asked for them): an attempt that
// ends while the test's window is open, or its page's call waits, would
// end them. The worker's first attempt waits for its storage to load: once
// that has loaded, the attempt has begun (connect awaits it first). Then
// connect is made a no-op, so no later attempt starts (a retry's, or an
// onInstalled or onStartup event's), the retry scheduled is cleared, and
// it waits for the attempt in flight to end.
func (w *worker) stopHostRetries(ctx context.Context) {
	w.t.Helper()
	w.call(nil, `async function () { await loaded; connect = async () => {}; clearTimeout(retry); }`)
	if err := poll.Until(ctx, 20*time.Millisecond, func() (bool, error) {
		var idle bool
		w.call(&idle, `function () { clearTimeout(retry); return port === null; }`)
		return idle, nil
	}); err != nil {
		w.t.Fatalf("the worker's native port never closed: %v", err)
	}
}

// its promise and decodes the result into out.
func (w *worker) call(out any, fn string, args ...any) {
	w.t.Helper()
	global, err := chromedp.Run(w.ctx, chromedp.Evaluate[*cdpruntime.RemoteObject]("globalThis"))
	if err != nil {
		w.t.Fatalf("worker global: %v", err)
	}
	raw, err := chromedp.Run(w.ctx, chromedp.CallFunctionOn[[]byte](fn, func(p *cdpruntime.CallFunctionOnParams) {
		p.ObjectID = global.ObjectID
		p.AwaitPromise = new(true)
	}, args...))
	if err != nil {
		w.t.Fatalf("call in the worker: %v", err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			w.t.Fatalf("decode the worker's answer: %v", err)
		}
	}
}

// reply is a service-worker reply to a host request (PROTOCOL.md §2).
type reply struct {
	ID      int             `json:"id"`
	Type    string          `json:"type"`
	Tab     int             `json:"tab"`
	Frame   int             `json:"frame"`
	Token   string          `json:"token"`
	Origins []string        `json:"origins"`
	Field   fieldInfo       `json:"field"`
	Form    json.RawMessage `json:"form"`
	Paused  bool            `json:"paused"`
	Window  int             `json:"window"`
	Matched bool            `json:"matched"`
	Reason  string          `json:"reason"`
	Error   string          `json:"error"`
	Detail  string          `json:"detail"`
}

// answer hands msg to the worker's request handler, as if the host had
// sent it, and returns the reply.
func (w *worker) answer(msg map[string]any) reply {
	w.t.Helper()
	var r reply
	w.call(&r, "function (msg) { return answer(msg); }", msg)
	return r
}

func TestExtensionLoads(t *testing.T) {
	ctx := testContext(t)
	_, bctx := startBrowser(t, ctx, true)
	w := attachWorker(t, ctx, bctx)

	var self struct {
		ID, Version string
		InPage      bool
	}
	w.call(&self, `function () {
		return { ID: chrome.runtime.id, Version: chrome.runtime.getManifest().version, InPage: typeof fillgateInPage === "function" };
	}`)
	if self.ID != manifest.ExtensionID || self.Version != "0.1.0" || !self.InPage {
		t.Fatalf("worker reports %+v; want id %s, version 0.1.0 and fillgateInPage loaded", self, manifest.ExtensionID)
	}

	// chrome://extensions knows what Chromium thought of the manifest.
	ext, cancel := chromedp.NewContext(bctx)
	defer cancel()
	if err := chromedp.Do(ext, chromedp.Navigate("chrome://extensions")); err != nil {
		t.Fatalf("open chrome://extensions: %v", err)
	}
	type problems struct {
		State                                          string
		InstallWarnings, ManifestErrors, RuntimeErrors []any
	}
	raw, err := chromedp.Run(ext, chromedp.Evaluate[string](`new Promise((resolve) =>
		chrome.developerPrivate.getExtensionInfo(`+"`"+manifest.ExtensionID+"`"+`, (e) => resolve(JSON.stringify({
			State: e.state, InstallWarnings: e.installWarnings, ManifestErrors: e.manifestErrors, RuntimeErrors: e.runtimeErrors,
		}))))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("read the extension's info: %v", err)
	}
	var p problems
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatalf("decode the extension's info: %v", err)
	}
	if p.State != "ENABLED" || len(p.InstallWarnings)+len(p.ManifestErrors)+len(p.RuntimeErrors) > 0 {
		t.Fatalf("Chromium reports %s", raw)
	}
}
