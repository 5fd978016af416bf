package pageprompt_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/pageprompt"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/promptwatch"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// watchCSP collects the page's CSP violations. Scripts added over CDP
// run whatever the page's CSP says.
const watchCSP = `window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", e => window.__cspViolations.push(e.violatedDirective));`

// watchTitle, added to every new document, records each title the page
// sets and whether the browser had shown the page (its first contentful
// paint) at that moment.
const watchTitle = `window.__titles = [];
new MutationObserver(() => {
  const t = document.title;
  if (window.__titles.at(-1)?.title !== t) {
    window.__titles.push({ title: t, shown: performance.getEntriesByName("first-contentful-paint").length > 0 });
  }
}).observe(document, { subtree: true, childList: true, characterData: true });`

// openInChromium loads url in a new tab, watching for CSP violations,
// brings it to the front and waits for its first frame.
func openInChromium(t *testing.T, browserCtx context.Context, url string) context.Context {
	t.Helper()
	tab := newChromiumTab(t, browserCtx)
	loadInTab(t, tab, url)
	return tab
}

// newChromiumTab opens a blank tab that watches for CSP violations, for
// loadInTab; a test with a short deadline opens it before the clock starts.
func newChromiumTab(t *testing.T, browserCtx context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("new tab: %v", err)
	}
	for _, src := range []string{watchCSP, watchTitle} {
		if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
			t.Fatalf("watch the page: %v", err)
		}
	}
	return tab
}

// loadInTab loads url in tab, brings it to the front and waits for the
// page's first frame.
func loadInTab(t *testing.T, tab context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(tab, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	if _, err := chromedp.Call(tab, page.BringToFront, cdp.Empty{}); err != nil {
		t.Fatalf("bring to front: %v", err)
	}
	waitShown(t, tab)
}

// waitShown waits until the browser has shown the page in tab (its first
// contentful paint), as a human's eyes would, before typing: Chromium
// drops the keys a page is sent before its first paint. The page's own
// script names the prompt in its title then, in an observer of the same
// paint entry that was registered first, so it has done so by the time
// this returns.
func waitShown(t *testing.T, tab context.Context) {
	t.Helper()
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](`new Promise((r) => {
		new PerformanceObserver((list) => {
			if (list.getEntriesByName("first-contentful-paint").length > 0) r();
		}).observe({ type: "paint", buffered: true });
	})`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("wait for the page to be shown: %v", err)
	}
}

// eval runs a JavaScript expression in tab.
func eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitText polls the page until its text holds want (the page navigates
// after an answer).
func waitText(t *testing.T, ctx, tab context.Context, want string) {
	t.Helper()
	var text string
	for {
		text, _ = chromedp.Run(tab, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		if strings.Contains(text, want) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the page never said %q; it says %q", want, text)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sharedChromium is the headless Chromium the package's browser tests
// share: starting one costs seconds of CPU, most of a short test's.
type sharedChromium struct {
	*browser.Chromium
	root context.Context // attached to the browser, for context
}

// context opens a browser context of t's own (its own cookies, storage
// and tabs, as an incognito window has), closed when t ends, and returns
// it for chromedp.NewContext to open tabs in: nothing of another test's
// pages reaches t's.
func (sc sharedChromium) context(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(sc.root, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	return ctx
}

// TestRealChromium runs the prompt's page in one real headless Chromium,
// each case in a browser context of its own.
func TestRealChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	c := browser.StartChromium(t, ctx, browser.ChromiumOptions{})
	sc := sharedChromium{Chromium: c, root: c.Attach(t, ctx)}
	for _, tc := range []struct {
		name string
		run  func(*testing.T, sharedChromium)
	}{
		{"keyboard", inRealChromium},
		{"system opener file", systemOpenerFileInRealChromium},
		{"without JavaScript", withoutJavaScriptInRealChromium},
		{"approve", approveInRealChromium},
		{"a script cannot answer", scriptCannotAnswer},
		{"the answer's size hides the length", answerSizeHidesLength},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, sc) })
	}
}

// inRealChromium drives the page in headless Chromium with the
// keyboard alone: the field has focus on load, Enter sends, Esc cancels.
// It also proves what only a browser can: the CSP hashes let the page's
// own style and script run and nothing is blocked, dark mode changes the
// colours, and the form's POST carries the Origin the prompt checks.
func inRealChromium(t *testing.T, sc sharedChromium) {
	ctx := testctx.New(t)
	c, browserCtx := sc.Chromium, sc.context(t)

	t.Run("enter submits", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		p, logs := startPrompt(t, ctx, testInfo())
		tab := openInChromium(t, browserCtx, p.URL())

		if id := eval[string](t, tab, `document.activeElement.id`); id != "value" {
			t.Errorf("focused element on load is %q, want the password input", id)
		}
		if title := eval[string](t, tab, `document.title`); title != "fillgate — password for github.com" {
			t.Errorf("the title once the prompt can take an answer is %q", title)
		}
		// Chromium drops the keys a page gets before its first paint: the
		// title that tells the person to type comes only after it.
		if early := eval[[]string](t, tab, `__titles.filter((t) => !t.shown && t.title.includes(" for ")).map((t) => t.title)`); len(early) > 0 {
			t.Errorf("the page named the prompt in its title before the browser had shown it: %q", early)
		}
		if r := eval[string](t, tab, `getComputedStyle(document.querySelector("main")).borderTopLeftRadius`); r != "12px" {
			t.Errorf("the page's style did not apply (CSP hash?): main border radius %q", r)
		}
		light := eval[string](t, tab, `getComputedStyle(document.body).backgroundColor`)
		if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
		}); err != nil {
			t.Fatalf("emulate dark mode: %v", err)
		}
		if dark := eval[string](t, tab, `getComputedStyle(document.body).backgroundColor`); dark == light {
			t.Errorf("dark mode has the light background %s", light)
		}
		if v := eval[[]string](t, tab, `window.__cspViolations`); len(v) != 0 {
			t.Errorf("CSP blocked parts of the page: %v", v)
		}

		if err := chromedp.Do(tab, chromedp.KeyEvent(string(secret)), chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatalf("type and press Enter: %v", err)
		}
		a, err := waitAnswer(t, ctx, p)
		if err != nil {
			t.Fatalf("wait: %v (prompt log:\n%s)", err, logs.Bytes())
		}
		if a.Cancelled {
			t.Errorf("Enter cancelled")
		}
		sameValue(t, a.Value, secret)
		clear(a.Value)
		// The engine closes the prompt as soon as it has the answer; the
		// final page must still arrive whole.
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		waitText(t, ctx, tab, "Sent. You can close this window.")

		final := eval[string](t, tab, `document.documentElement.outerHTML`)
		noLeak(t, secret, map[string][]byte{"final page": []byte(final), "log": logs.Bytes(), "chromium output": []byte(c.Output())})
	})

	// What is typed never enters the page: the field shows one fixed mask
	// however much is typed, the accessibility tree (what an agent's
	// snapshot of the tab reads) holds neither the value nor its length,
	// and editing works on the value kept in the script: Backspace takes
	// the last character back, select-all and typing starts over, a paste
	// appends.
	t.Run("the value stays out of the page", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		p, logs := startPrompt(t, ctx, testInfo())
		tab := openInChromium(t, browserCtx, p.URL())
		field := func() string { return eval[string](t, tab, `document.getElementById("value").value`) }
		if field() != "" {
			t.Fatalf("the field is not empty at first")
		}
		if err := chromedp.Do(tab, chromedp.KeyEvent("x")); err != nil {
			t.Fatal(err)
		}
		mask := field()
		if mask == "" || strings.Contains(mask, "x") {
			t.Fatalf("one typed character shows as %q; want a mask", mask)
		}
		// Start over (select all, then type), type the secret with a wrong
		// last character and take that back.
		if err := chromedp.Do(tab, chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
			chromedp.KeyEvent(string(secret[:len(secret)/2])),
			chromedp.KeyEvent("#"), chromedp.KeyEvent(kb.Backspace)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(tab, input.InsertText, input.InsertTextParams{Text: string(secret[len(secret)/2:])}); err != nil {
			t.Fatalf("insert the rest as a paste would: %v", err)
		}
		if got := field(); got != mask {
			t.Errorf("after typing more the field shows something else than the same mask")
		}
		tree, err := chromedp.Call(tab, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
		if err != nil {
			t.Fatalf("accessibility tree: %v", err)
		}
		ax, _ := json.Marshal(tree)
		leakscan.Bytes(t, secret, "the page's accessibility tree", ax)
		leakscan.Bytes(t, secret, "the field's DOM value", []byte(field()))
		if err := chromedp.Do(tab, chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatal(err)
		}
		gotValue(t, ctx, p, secret)
		noLeak(t, secret, map[string][]byte{"log": logs.Bytes()})
	})

	t.Run("esc cancels", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		info := testInfo()
		info.Field = fill.FieldOTP
		p, logs := startPrompt(t, ctx, info)
		tab := openInChromium(t, browserCtx, p.URL())
		// Typed, then Esc: nothing must come through.
		if err := chromedp.Do(tab, chromedp.KeyEvent(string(secret)), chromedp.KeyEvent(kb.Escape)); err != nil {
			t.Fatalf("type and press Esc: %v", err)
		}
		a, err := waitAnswer(t, ctx, p)
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
		if !a.Cancelled || a.Value != nil {
			t.Errorf("Esc did not cancel: cancelled=%v", a.Cancelled)
		}
		waitText(t, ctx, tab, "Cancelled.")
		final := eval[string](t, tab, `document.documentElement.outerHTML`)
		noLeak(t, secret, map[string][]byte{"final page": []byte(final), "log": logs.Bytes(), "chromium output": []byte(c.Output())})
	})

	t.Run("empty enter keeps the prompt open", func(t *testing.T) {
		p, _ := startPrompt(t, ctx, testInfo())
		tab := openInChromium(t, browserCtx, p.URL())
		// The required field stops the browser from sending nothing.
		if err := chromedp.Do(tab, chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatalf("press Enter: %v", err)
		}
		secret := leakscan.NewSecret(t)
		if err := chromedp.Do(tab, chromedp.KeyEvent(string(secret)), chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatalf("type and press Enter: %v", err)
		}
		gotValue(t, ctx, p, secret)
	})
}

// waitURL polls the tab until it shows url with its document loaded.
func waitURL(t *testing.T, ctx, tab context.Context, url string) {
	t.Helper()
	ready := `document.readyState === "complete" && location.href === ` + strconv.Quote(url)
	for {
		if ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](ready)); err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the tab never loaded the prompt")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// systemOpenerFileInRealChromium opens a local file like the system
// opener's in Chromium: its meta refresh leads to the prompt (a
// cross-site navigation the prompt lets in), the prompt binds itself to
// this browser with its cookie, which Chromium keeps on 127.0.0.1 without
// Secure and sends back on a reload and with the form's POST; another
// client loading the URL afterwards burns the prompt, and the form in
// Chromium can no longer answer.
func systemOpenerFileInRealChromium(t *testing.T, sc sharedChromium) {
	ctx := testctx.New(t)
	c, browserCtx := sc.Chromium, sc.context(t)

	t.Run("file, reload, enter", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		p, logs := startPrompt(t, ctx, testInfo())
		tab, cancel := chromedp.NewContext(browserCtx)
		t.Cleanup(cancel)
		if err := chromedp.Do(tab, chromedp.Navigate("file://"+writeRedirectFile(t, p.URL()))); err != nil {
			t.Fatalf("open the file: %v", err)
		}
		waitURL(t, ctx, tab, p.URL())
		if !eval[bool](t, tab, `!!document.querySelector('form input[name="csrf"]')`) {
			t.Fatalf("the prompt's form did not load from the file")
		}
		if err := chromedp.Do(tab, chromedp.Reload()); err != nil {
			t.Fatalf("reload: %v", err)
		}
		waitURL(t, ctx, tab, p.URL())
		if !eval[bool](t, tab, `!!document.getElementById("value")`) {
			t.Fatalf("a reload did not show the form again: %s", eval[string](t, tab, `document.body.innerText`))
		}
		if _, err := chromedp.Call(tab, page.BringToFront, cdp.Empty{}); err != nil {
			t.Fatalf("bring to front: %v", err)
		}
		waitShown(t, tab)
		if id := eval[string](t, tab, `document.activeElement.id`); id != "value" {
			t.Errorf("focused element after the reload is %q, want the password input", id)
		}
		if err := chromedp.Do(tab, chromedp.KeyEvent(string(secret)), chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatalf("type and press Enter: %v", err)
		}
		a, err := waitAnswer(t, ctx, p)
		if err != nil {
			t.Fatalf("wait: %v (prompt log:\n%s)", err, logs.Bytes())
		}
		sameValue(t, a.Value, secret)
		clear(a.Value)
		waitText(t, ctx, tab, "Sent. You can close this window.")
		noLeak(t, secret, map[string][]byte{"log": logs.Bytes(), "chromium output": []byte(c.Output())})
	})

	t.Run("a second client burns it", func(t *testing.T) {
		p, _ := startPrompt(t, ctx, testInfo())
		tab, cancel := chromedp.NewContext(browserCtx)
		t.Cleanup(cancel)
		if err := chromedp.Do(tab, chromedp.Navigate("file://"+writeRedirectFile(t, p.URL()))); err != nil {
			t.Fatalf("open the file: %v", err)
		}
		waitURL(t, ctx, tab, p.URL())
		if _, err := fakehuman.Open(ctx, p.URL()); err == nil {
			t.Fatalf("a second client got the form")
		}
		if _, err := waitAnswer(t, ctx, p); !errors.Is(err, pageprompt.ErrSecondClient) {
			t.Fatalf("wait: %v, want ErrSecondClient", err)
		}
		// The prompt ended: its watch ended, and the page in Chromium
		// disabled itself without anyone touching it.
		waitState(t, ctx, tab, "closed")
		if !eval[bool](t, tab, `document.getElementById("value").disabled && document.getElementById("answer").hidden`) {
			t.Errorf("the burned prompt's field is still usable")
		}
		if text := eval[string](t, tab, `document.body.innerText`); strings.Contains(text, "Sent.") {
			t.Errorf("the burned prompt took an answer from Chromium")
		}
	})
}

// waitState waits until the prompt page in tab shows final state want
// (its script sets body's data-state), and fails if it shows another.
func waitState(t *testing.T, ctx, tab context.Context, want string) {
	t.Helper()
	got, err := promptwatch.FinalState(ctx, tab)
	if err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	if got != want {
		t.Fatalf("the page's final state is %q, want %q", got, want)
	}
}

// TestSystemOpenerFileInRealFirefox is the file → prompt → reload →
// answer path in Firefox ESR, driven over WebDriver BiDi.
func TestSystemOpenerFileInRealFirefox(t *testing.T) {
	ctx := testctx.New(t)
	ff := browser.StartFirefox(t, ctx, browser.FirefoxOptions{})
	var tree struct {
		Contexts []struct {
			Context string `json:"context"`
		} `json:"contexts"`
	}
	if err := ff.Call(ctx, "browsingContext.getTree", map[string]any{}, &tree); err != nil || len(tree.Contexts) == 0 {
		t.Fatalf("firefox tabs: %v", err)
	}
	tab := tree.Contexts[0].Context
	// run evaluates a boolean expression in the tab.
	run := func(expr string) bool {
		t.Helper()
		var res struct {
			Type   string `json:"type"`
			Result struct {
				Type  string `json:"type"`
				Value any    `json:"value"`
			} `json:"result"`
		}
		if err := ff.Call(ctx, "script.evaluate", map[string]any{
			"expression": expr, "awaitPromise": false, "target": map[string]string{"context": tab},
		}, &res); err != nil {
			t.Fatalf("evaluate: %v", err)
		}
		return res.Type == "success" && res.Result.Value == true
	}
	// waitFor polls expr until it holds.
	waitFor := func(what, expr string) {
		t.Helper()
		for !run(expr) {
			select {
			case <-ctx.Done():
				t.Fatalf("%s never happened", what)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}

	secret := leakscan.NewSecret(t)
	p, logs := startPrompt(t, ctx, testInfo())
	onForm := `document.readyState === "complete" && location.href === ` + strconv.Quote(p.URL()) +
		` && !!document.getElementById("value")`
	if err := ff.Call(ctx, "browsingContext.navigate", map[string]any{
		"context": tab, "url": "file://" + writeRedirectFile(t, p.URL()), "wait": "complete",
	}, nil); err != nil {
		t.Fatalf("open the file: %v", err)
	}
	waitFor("the form from the file", onForm)
	if err := ff.Call(ctx, "browsingContext.reload", map[string]any{"context": tab, "wait": "complete"}, nil); err != nil {
		t.Fatalf("reload: %v", err)
	}
	waitFor("the form after a reload", onForm)
	// Typed as keys: the page keeps what is typed itself, so setting the
	// field's value from a script would send nothing.
	var keys []map[string]string
	for _, r := range string(secret) {
		keys = append(keys, map[string]string{"type": "keyDown", "value": string(r)}, map[string]string{"type": "keyUp", "value": string(r)})
	}
	// Then Enter (WebDriver's key U+E007), a key the person presses: a
	// click made by a script is not the person's and sends nothing.
	keys = append(keys, map[string]string{"type": "keyDown", "value": "\uE007"}, map[string]string{"type": "keyUp", "value": "\uE007"})
	if !run(`(() => { document.getElementById("value").focus(); return true })()`) ||
		ff.Call(ctx, "input.performActions", map[string]any{"context": tab,
			"actions": []map[string]any{{"type": "key", "id": "keyboard", "actions": keys}}}, nil) != nil {
		t.Fatalf("could not answer the form")
	}
	a, err := waitAnswer(t, ctx, p)
	if err != nil {
		t.Fatalf("wait: %v (prompt log:\n%s)", err, logs.Bytes())
	}
	sameValue(t, a.Value, secret)
	clear(a.Value)
	waitFor("the final page", `document.body && document.body.innerText.includes("Sent.")`)
	noLeak(t, secret, map[string][]byte{"log": logs.Bytes(), "firefox output": []byte(ff.Output())})
}

// withoutJavaScriptInRealChromium loads the prompt in Chromium with
// JavaScript off: the page says it needs JavaScript, offers no field to
// type into and can send nothing, and its Cancel form still cancels.
func withoutJavaScriptInRealChromium(t *testing.T, sc sharedChromium) {
	ctx := testctx.New(t)
	bctx := sc.context(t)
	p, _ := startPrompt(t, ctx, testInfo())
	tab, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	if _, err := chromedp.Call(tab, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("turn JavaScript off: %v", err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(p.URL())); err != nil {
		t.Fatalf("open the prompt: %v", err)
	}
	rec := browser.Record(t, tab)
	text := eval[string](t, tab, `document.body.innerText`)
	if !strings.Contains(text, "needs JavaScript") {
		t.Errorf("without JavaScript the page does not say it needs it: %q", text)
	}
	if eval[bool](t, tab, `document.getElementById("value").getClientRects().length > 0 || !document.getElementById("send").hidden`) {
		t.Errorf("without JavaScript the page offers a field or a Send button")
	}
	if title := eval[string](t, tab, `document.title`); title != "fillgate — opening the prompt" {
		t.Errorf("without JavaScript the title is %q: it must not name a prompt that cannot be answered", title)
	}
	if err := chromedp.Do(tab, chromedp.Click("#cancel")); err != nil {
		t.Fatalf("click Cancel: %v", err)
	}
	a, err := waitAnswer(t, ctx, p)
	if err != nil || !a.Cancelled {
		t.Fatalf("the Cancel form without JavaScript: cancelled=%v, %v", a.Cancelled, err)
	}
	for _, post := range rec.Posts(t) {
		if strings.Contains(string(post.Body), "answer=") || strings.Contains(string(post.Body), "value=") {
			t.Errorf("without JavaScript the page sent an answer")
		}
	}
	waitText(t, ctx, tab, "Cancelled.")
}
