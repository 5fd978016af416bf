//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/promptwatch"
)

// firefox is one headless Firefox ESR with the extension that `fillgate
// install` unpacked, installed as a temporary add-on over WebDriver BiDi,
// the host Firefox started from the manifest install wrote into
// $HOME/.mozilla/native-messaging-hosts, and the login pages on two
// loopback origins. It is the Firefox counterpart of chromium.
type firefox struct {
	*browserSession
	ff      *browser.Firefox
	profile string
	// fission is whether Firefox isolates each site's documents in
	// processes of their own (its default).
	fission bool
	// uuid is the moz-extension:// host Firefox gave the temporary add-on
	// (random per install), for opening its popup page.
	uuid string
}

// startFirefox sets everything up in a new rig, starting Firefox with o
// (its Prefs and AllowSystemAccess; the profile and environment are the
// rig's). Stop it with finish, which also runs the leak scans that need
// the profile flushed.
func startFirefox(t testing.TB, ctx context.Context, o browser.FirefoxOptions) *firefox {
	t.Helper()
	r := newRig(t)
	r.install(t, ctx, filepath.Join(r.root, "home", ".mozilla", "native-messaging-hosts"), "--browser", "firefox")
	fx := &firefox{browserSession: newSession(t, ctx, r), profile: filepath.Join(r.root, "profile"),
		fission: !strings.Contains(o.Prefs, `user_pref("fission.autostart", false);`)}
	if err := os.Mkdir(fx.profile, 0o700); err != nil {
		t.Fatal(err)
	}
	o.Profile, o.Env = fx.profile, r.env
	fx.ff = browser.StartFirefox(t, ctx, o)
	fx.browserPID = fx.ff.Cmd.Process.Pid
	fx.prompts = promptwatch.BiDi(t, ctx, fx.ff, fx.isPrompt())
	fx.installExtension(t)
	fx.host = fx.nextHost(t, 0)
	fx.doctorSees(t, ctx, fx.host.PID, "firefox", "--browser", "firefox")
	return fx
}

// installExtension installs the unpacked extension as a temporary add-on,
// as a person would from about:debugging, and finds the moz-extension
// UUID it got.
func (fx *firefox) installExtension(t testing.TB) {
	t.Helper()
	var installed struct {
		Extension string `json:"extension"`
	}
	if err := fx.ff.Call(fx.ctx, "webExtension.install", map[string]any{
		"extensionData": map[string]string{"type": "path", "path": fx.extensionDir},
	}, &installed); err != nil {
		t.Fatalf("install the extension as a temporary add-on: %v", err)
	}
	if installed.Extension != manifest.FirefoxID {
		t.Fatalf("installed as %q; want %q", installed.Extension, manifest.FirefoxID)
	}
	fx.uuid = fx.addonUUID(t)
}

// uuidsPref is the line of prefs.js where Firefox keeps each add-on's
// moz-extension UUID, a JSON object in a string.
var uuidsPref = regexp.MustCompile(`(?m)^user_pref\("extensions\.webextensions\.uuids", ("(?:[^"\\]|\\.)*")\);$`)

// addonUUID waits until Firefox has saved the add-on's UUID to the
// profile's prefs.js (it saves changed prefs within a moment) and returns
// it.
func (fx *firefox) addonUUID(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(fx.ctx, 30*time.Second)
	defer cancel()
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	ids := map[string]string{}
	if err := poll.Until(ctx, 100*time.Millisecond, func() (bool, error) {
		data, _ := os.ReadFile(filepath.Join(fx.profile, "prefs.js"))
		var obj string
		m := uuidsPref.FindSubmatch(data)
		return m != nil && json.Unmarshal(m[1], &obj) == nil && json.Unmarshal([]byte(obj), &ids) == nil && uuid.MatchString(ids[manifest.FirefoxID]), nil
	}); err != nil {
		t.Fatalf("Firefox never saved the add-on's UUID to prefs.js: %v", err)
	}
	return ids[manifest.FirefoxID]
}

// nextHost waits for a host that the browser started, with the extension
// connected, other than the host whose pid is old (0: any), checks it
// and returns its status.
func (fx *firefox) nextHost(t testing.TB, old int) agentsock.HostStatus {
	t.Helper()
	host := fx.waitHostOf(t, fx.ctx, fx.browserPID, old)
	if host.Browser != "firefox" || host.BrowserName != "firefox" || host.Profile != fx.profile ||
		host.Caller != manifest.FirefoxID || host.Extension.Paused || host.Extension.Instance == "" {
		t.Fatalf("host status %+v; want firefox with profile %s, called by %s, not paused, with an instance id", host, fx.profile, manifest.FirefoxID)
	}
	fx.checkHostProcess(t, host, fx.browserPID)
	return host
}

func (fx *firefox) session() *browserSession { return fx.browserSession }

func (fx *firefox) stop() string {
	fx.ff.Stop()
	return fx.ff.Output()
}

// pageURLs lists the URLs of Firefox's top-level browsing contexts.
func (fx *firefox) pageURLs(t testing.TB) []string {
	t.Helper()
	var urls []string
	for _, c := range contexts(t, fx.ctx, fx.ff) {
		urls = append(urls, c.URL)
	}
	return urls
}

// closeWindow closes the browsing context id.
func (fx *firefox) closeWindow(t testing.TB, id string) {
	t.Helper()
	if err := fx.ff.Call(fx.ctx, "browsingContext.close", map[string]any{"context": id}, nil); err != nil {
		t.Fatalf("close the window: %v", err)
	}
}

// open opens url in a new tab in front of the browser window and waits
// for it to load; the tab closes when the test ends.
func (fx *firefox) open(t testing.TB, url string) page { return fx.openTab(t, url) }

// openTab is open, for the Firefox-only tests that reach into the tab.
func (fx *firefox) openTab(t testing.TB, url string) bidiTab {
	t.Helper()
	var created struct {
		Context string `json:"context"`
	}
	if err := fx.ff.Call(fx.ctx, "browsingContext.create", map[string]any{"type": "tab"}, &created); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	tb := bidiTab{t: t, ctx: fx.ctx, ff: fx.ff, id: created.Context}
	t.Cleanup(func() {
		// The tab may be gone already (the test closed it).
		_ = fx.ff.Call(fx.ctx, "browsingContext.close", map[string]any{"context": tb.id}, nil)
	})
	tb.navigate(url)
	if err := fx.ff.Call(fx.ctx, "browsingContext.activate", map[string]any{"context": tb.id}, nil); err != nil {
		t.Fatalf("bring %s to the front: %v", url, err)
	}
	return tb
}

// awaitPrompt waits for prompt number n to open, load and say it is
// ready (promptwatch.Ready), and puts the focus into its field: Firefox
// never reports focus in headless mode, so autofocus may not apply, and
// the human clicks into the field.
func (fx *firefox) awaitPrompt(t testing.TB, n int) prompt {
	return awaitBiDiPrompt(t, fx.ctx, fx.ff, fx.prompts, n)
}

// awaitBiDiPrompt is awaitPrompt in Firefox ff whose prompts w watches.
func awaitBiDiPrompt(t testing.TB, ctx context.Context, ff *browser.Firefox, w *promptwatch.Watch, n int) *bidiPrompt {
	t.Helper()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	id, err := w.Next(wait, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WaitLoaded(wait, id); err != nil {
		t.Fatal(err)
	}
	p := &bidiPrompt{bidiTab{t: t, ctx: ctx, ff: ff, id: id}}
	p.waitFor(promptwatch.Ready)
	if !p.call(`function () { const f = document.getElementById("value"); f.focus(); return document.activeElement === f; }`) {
		t.Fatal("could not focus the prompt's field")
	}
	return p
}

// bidiPrompt is the prompt popup, driven over WebDriver BiDi.
type bidiPrompt struct{ bidiTab }

func (p *bidiPrompt) windowID() string { return p.id }

// enter presses Enter in the prompt.
func (p *bidiPrompt) enter() {
	p.t.Helper()
	p.typeKeys(enterKey)
}

// isolatedProcesses counts the browser's "Isolated Web Content"
// processes: with Fission, each site's documents (a cross-site frame's
// too) run in one of their own; without it, pages share "Web Content"
// processes.
func (fx *firefox) isolatedProcesses() int {
	n := 0
	for _, p := range descendants(fx.browserPID) {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm")
		if strings.TrimSpace(string(comm)) == "Isolated Web Co" { // the name is cut at 15 bytes
			n++
		}
	}
	return n
}

// wantIsolation checks that the frames run as fx.fission says: with
// Fission, the page and its cross-site frame in isolated processes of
// their own; without it, in none.
func (fx *firefox) wantIsolation(t *testing.T) {
	t.Helper()
	if n := fx.isolatedProcesses(); fx.fission != (n >= 2) || !fx.fission && n != 0 {
		t.Fatalf("%d isolated web content processes; want Fission %v", n, fx.fission)
	}
}

// setPaused flips the pause switch in the extension's toolbar popup, as
// the user would, and waits until the host has heard of it. The worker
// answers the popup itself only, never its page opened in a tab (which a
// program driving the browser could open and click), and Firefox lists no
// browsing context for the popup that WebDriver BiDi could script. So the
// popup's page is opened in a tab, which must say that it is given
// nothing; it opens the real popup with browser.action.openPopup(), with
// the user activation a click into it gives, and reaches the popup's
// document as any page of the add-on may (browser.extension.getViews),
// where the switch is flipped.
func (fx *firefox) setPaused(t *testing.T, paused bool) {
	t.Helper()
	tab := fx.openTab(t, "moz-extension://"+fx.uuid+"/popup.html")
	defer func() {
		if err := fx.ff.Call(fx.ctx, "browsingContext.close", map[string]any{"context": tab.id}, nil); err != nil {
			t.Errorf("close the popup's page: %v", err)
		}
	}()
	// The page asks the worker for the state as it loads; opened in a tab,
	// it gets nothing and says so.
	tab.waitFor(`document.getElementById("conn").textContent.startsWith("Open fillgate from its toolbar button")`)
	if v, err := tab.runActivated(`function () { return browser.action.openPopup().then(() => true); }`); err != nil || string(v.Value) != "true" {
		t.Fatalf("browser.action.openPopup() from the add-on's page: %s, %v", v.Value, err)
	}
	defer func() {
		tab.call(`function () { for (const w of browser.extension.getViews({ type: "popup" })) w.close(); return true; }`)
		tab.waitFor(`browser.extension.getViews({ type: "popup" }).length === 0`)
	}()
	tab.waitFor(`browser.extension.getViews({ type: "popup" }).some((w) => w.document.getElementById("conn")?.className === "ok")`)
	if !tab.call(`function (want) {
		const [w] = browser.extension.getViews({ type: "popup" });
		const s = w.document.getElementById("pause");
		if (s.checked !== (want === "true")) s.click();
		return s.checked === (want === "true");
	}`, strconv.FormatBool(paused)) {
		t.Fatal("flip the pause switch")
	}
	fx.awaitPaused(t, fx.ctx, paused)
}

// bidiContext is a browsing context in browsingContext.getTree.
type bidiContext struct {
	Context  string        `json:"context"`
	URL      string        `json:"url"`
	Children []bidiContext `json:"children"`
}

// contexts lists Firefox's top-level browsing contexts (tabs and popup
// windows).
func contexts(t testing.TB, ctx context.Context, ff *browser.Firefox) []bidiContext {
	t.Helper()
	var tree struct {
		Contexts []bidiContext `json:"contexts"`
	}
	if err := ff.Call(ctx, "browsingContext.getTree", map[string]any{"maxDepth": 0}, &tree); err != nil {
		t.Fatalf("firefox's browsing contexts: %v", err)
	}
	return tree.Contexts
}

// bidiTab is a browsing context (a tab, a popup window or a frame) driven
// over WebDriver BiDi.
type bidiTab struct {
	t   testing.TB
	ctx context.Context
	ff  *browser.Firefox
	id  string
}

// bidiRemote is a WebDriver BiDi remote value.
type bidiRemote struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// run calls the function declaration fn with string arguments in the
// page's own world, awaiting a promise it returns, and returns the
// result. An error never quotes the arguments.
func (b bidiTab) run(fn string, args ...string) (bidiRemote, error) {
	return b.callFunction(fn, false, args...)
}

// runActivated is run with the user activation a click into the page
// gives (some calls, such as opening an add-on's popup, need one).
func (b bidiTab) runActivated(fn string, args ...string) (bidiRemote, error) {
	return b.callFunction(fn, true, args...)
}

// callFunction is run, with user activation when activated.
func (b bidiTab) callFunction(fn string, activated bool, args ...string) (bidiRemote, error) {
	var bidiArgs []map[string]string
	for _, a := range args {
		bidiArgs = append(bidiArgs, map[string]string{"type": "string", "value": a})
	}
	var res struct {
		Type   string     `json:"type"`
		Result bidiRemote `json:"result"`
	}
	err := b.ff.Call(b.ctx, "script.callFunction", map[string]any{
		"functionDeclaration": fn, "arguments": bidiArgs, "awaitPromise": true, "userActivation": activated,
		"target": map[string]string{"context": b.id},
	}, &res)
	if err != nil && len(args) == 0 {
		return bidiRemote{}, fmt.Errorf("call in the page: %w", err)
	}
	if err != nil {
		return bidiRemote{}, errors.New("call in the page failed") // the error might quote an argument
	}
	if res.Type != "success" {
		return bidiRemote{}, fmt.Errorf("call in the page: %s", res.Type)
	}
	return res.Result, nil
}

// try is run for a function that returns a boolean.
func (b bidiTab) try(fn string, args ...string) (bool, error) {
	v, err := b.run(fn, args...)
	if err != nil {
		return false, err
	}
	if v.Type != "boolean" {
		return false, fmt.Errorf("call in the page: returned a %s", v.Type)
	}
	return string(v.Value) == "true", nil
}

// call is try that fails the test on an error.
func (b bidiTab) call(fn string, args ...string) bool {
	b.t.Helper()
	ok, err := b.try(fn, args...)
	if err != nil {
		b.t.Fatal(err)
	}
	return ok
}

// eval evaluates a boolean expression in the page's own world.
func (b bidiTab) eval(expr string) bool {
	b.t.Helper()
	return b.call("function () { return (" + expr + "); }")
}

// holds reports whether fn, a function declaration run in the page's own
// world, returns true for the secret. The comparison happens in the page;
// only the boolean comes back.
func (b bidiTab) holds(fn string, secret []byte) bool {
	b.t.Helper()
	return b.call(fn, string(secret))
}

// focus focuses the element expr evaluates to, as a click into it would.
func (b bidiTab) focus(expr string) {
	b.t.Helper()
	// As a person clicks a field once it shows: a page that renders its
	// form from script may not have it yet when it has loaded (React 18
	// renders in a task of its own, which can come after the load event).
	b.waitFor("(" + expr + ") != null")
	if !b.eval(`(() => { const el = ` + expr + `; el.focus(); return el.getRootNode().activeElement === el; })()`) {
		b.t.Fatalf("could not focus %s", expr)
	}
}

// navigate loads url in the context and waits for it to load.
func (b bidiTab) navigate(url string) {
	b.t.Helper()
	if err := b.ff.Call(b.ctx, "browsingContext.navigate", map[string]any{"context": b.id, "url": url, "wait": "complete"}, nil); err != nil {
		b.t.Fatalf("open %s: %v", url, err)
	}
}

// says checks that the page's text holds each of texts.
func (b bidiTab) says(texts ...string) {
	b.t.Helper()
	v, err := b.run(`function () { return document.body.innerText; }`)
	var body string
	if err != nil || v.Type != "string" || json.Unmarshal(v.Value, &body) != nil {
		b.t.Fatalf("read the page's text: %v (%s)", err, v.Type)
	}
	for _, s := range texts {
		if !strings.Contains(body, s) {
			b.t.Errorf("the page does not say %q; it says %q", s, body)
		}
	}
}

// looksRight checks that the prompt is a popup window of the size the
// extension asks for (sw.js) and that the person sees its field and its
// buttons (Send and Cancel) without scrolling.
func (p *bidiPrompt) looksRight(t testing.TB) {
	t.Helper()
	b := p.bidiTab
	v, err := b.run(`function () {
		const seen = (el) => { const r = el.getBoundingClientRect();
			return r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; };
		const field = document.getElementById("value");
		const els = [field, document.getElementById("send"), document.getElementById("cancel")];
		const where = els.map((el) => { if (!el) return "missing";
			const r = el.getBoundingClientRect(); return el.id + " " + r.left + "," + r.top + " " + r.width + "x" + r.height; });
		return JSON.stringify({ w: outerWidth, h: outerHeight, seen: els.length >= 3 && els.every(seen),
			where: "inner " + innerWidth + "x" + innerHeight + ", " + where.join("; ") });
	}`)
	var raw string
	var got struct {
		W, H  int
		Seen  bool
		Where string
	}
	if err != nil || json.Unmarshal(v.Value, &raw) != nil || json.Unmarshal([]byte(raw), &got) != nil {
		b.t.Fatalf("measure the prompt: %v", err)
	}
	if got.W != popupWidth || got.H != popupHeight || !got.Seen {
		b.t.Errorf("the prompt window is %dx%d (want %dx%d) and shows its field and buttons: %v (%s)", got.W, got.H, popupWidth, popupHeight, got.Seen, got.Where)
	}
}

// frame returns the child browsing context (of any depth) whose URL
// starts with prefix: a frame from the same or another site, in this
// process or another.
func (b bidiTab) frame(prefix string) page {
	b.t.Helper()
	var tree struct {
		Contexts []bidiContext `json:"contexts"`
	}
	if err := b.ff.Call(b.ctx, "browsingContext.getTree", map[string]any{"root": b.id}, &tree); err != nil {
		b.t.Fatalf("the page's frames: %v", err)
	}
	var find func([]bidiContext) string
	find = func(cs []bidiContext) string {
		for _, c := range cs {
			if c.Context != b.id && strings.HasPrefix(c.URL, prefix) {
				return c.Context
			}
			if id := find(c.Children); id != "" {
				return id
			}
		}
		return ""
	}
	id := find(tree.Contexts)
	if id == "" {
		b.t.Fatalf("no frame at %s in %+v", prefix, tree.Contexts)
	}
	return bidiTab{t: b.t, ctx: b.ctx, ff: b.ff, id: id}
}

// click clicks the left mouse button at (x, y) of the viewport, through
// WebDriver BiDi input actions.
func (b bidiTab) click(x, y float64) {
	b.t.Helper()
	err := b.ff.Call(b.ctx, "input.performActions", map[string]any{
		"context": b.id,
		"actions": []map[string]any{{"type": "pointer", "id": "mouse", "parameters": map[string]string{"pointerType": "mouse"},
			"actions": []map[string]any{
				{"type": "pointerMove", "x": int(math.Round(x)), "y": int(math.Round(y)), "origin": "viewport"},
				{"type": "pointerDown", "button": 0},
				{"type": "pointerUp", "button": 0},
			}}},
	}, nil)
	if err != nil {
		b.t.Fatalf("click at %v,%v: %v", x, y, err)
	}
}

// clickCancel clicks the prompt's Cancel button with the mouse.
func (b bidiTab) clickCancel() {
	b.t.Helper()
	v, err := b.run(`function () {
		const r = document.getElementById("cancel").getBoundingClientRect();
		return JSON.stringify({ X: r.left + r.width / 2, Y: r.top + r.height / 2 });
	}`)
	var raw string
	var at struct{ X, Y float64 }
	if err != nil || json.Unmarshal(v.Value, &raw) != nil || json.Unmarshal([]byte(raw), &at) != nil {
		b.t.Fatalf("find the Cancel button: %v", err)
	}
	b.click(at.X, at.Y)
}

// typeKeys types text into the focused element key by key, through
// WebDriver BiDi input actions. An error never quotes the text.
func (b bidiTab) typeKeys(text string) {
	b.t.Helper()
	var keys []map[string]string
	for _, r := range text {
		k := string(r)
		keys = append(keys, map[string]string{"type": "keyDown", "value": k}, map[string]string{"type": "keyUp", "value": k})
	}
	err := b.ff.Call(b.ctx, "input.performActions", map[string]any{
		"context": b.id,
		"actions": []map[string]any{{"type": "key", "id": "keyboard", "actions": keys}},
	}, nil)
	clear(keys)
	if err != nil {
		b.t.Fatalf("type into the page failed")
	}
}

// typeSecret types the secret into the prompt's focused field.
func (b bidiTab) typeSecret(secret []byte) {
	b.t.Helper()
	b.typeKeys(string(secret))
}

// send types the secret into the prompt's focused field and presses
// Enter, as the human would.
func (b bidiTab) send(secret []byte) {
	b.t.Helper()
	b.typeKeys(string(secret) + enterKey)
}

// enterKey is WebDriver's Enter key.
const enterKey = "\uE007"

// waitFor evaluates expr in the page until it holds.
func (b bidiTab) waitFor(expr string) {
	b.t.Helper()
	b.await("function () { return (" + expr + "); }")
}

// goBack goes back in the tab's history, as the person pressing Back
// would, and waits until the page with field id shows again.
func (b bidiTab) goBack(id string) {
	b.t.Helper()
	if err := b.ff.Call(b.ctx, "browsingContext.traverseHistory", map[string]any{"context": b.id, "delta": -1}, nil); err != nil {
		b.t.Fatalf("go back: %v", err)
	}
	b.waitFor(backAt(id))
}

// await calls fn (no arguments) in the page until it returns true; the
// page may be loading, so a failed call is tried again until the deadline.
func (b bidiTab) await(fn string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := poll.Until(ctx, 50*time.Millisecond, func() (bool, error) { return b.try(fn) }); err != nil {
		b.t.Fatalf("the page never got there: %v", err)
	}
}
