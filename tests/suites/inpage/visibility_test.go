package inpage

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// The visibility tests run every page of visibility_pages_test.go in one
// tab per browser, navigated from case to case (oneTab.visit, and
// firefoxTab.navigate, say why nothing of a case reaches the next).

// settle waits, in the page, until its animations have finished (a
// fade-in is filled once it is over, not while it runs).
func (tb *tab) settle() {
	tb.t.Helper()
	const js = `Promise.all(document.getAnimations().map((a) => a.finished)).then(() => true)`
	if _, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise)); err != nil {
		tb.t.Fatalf("wait for the page's animations: %v", err)
	}
}

// TestVisibility runs the in-page function in CDP isolated worlds, as the
// CDP fallback does: every trick that hides the field, or the frame
// holding it, is refused with its problem code, and every ordinary login
// page is filled.
func TestVisibility(t *testing.T) {
	ctx := testContext(t)
	srv := serve(t, testPages)
	_, bctx := startBrowser(t, ctx, false)
	tabs := shareTab(t, bctx)
	framed := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/password"
	secret := leakscan.NewSecret(t)
	defer clear(secret)

	for _, c := range append(tricks, chromiumTricks...) {
		t.Run(name(c.path), func(t *testing.T) {
			tb := tabs.visit(t, srv.URL+c.path)
			tb.focus("f")
			p := tb.probe(tb.top(), "tok")
			if p.Field.Kind != "password" || p.Field.Problem != c.problem {
				t.Fatalf("probe field = %+v; want a password field with problem %q", p.Field, c.problem)
			}
			if v := tb.insert(tb.top(), "tok", srv.URL, "password", secret); v.Inserted || v.Reason != "not_usable" {
				t.Fatalf("insert = %+v; want not inserted, not_usable", v)
			}
			if !tb.eval(`f.value === ""`) {
				t.Error("the field changed")
			}
		})
	}
	for _, c := range frameTricks {
		t.Run(name(c.path), func(t *testing.T) {
			tb := tabs.visit(t, srv.URL+c.path)
			tb.frame(framed).focus("f")
			p := tb.probe(tb.top(), "tok")
			if !p.ActiveIsFrame || p.Field.Problem != c.problem {
				t.Fatalf("top probe = %+v; want the focused frame element with problem %q", p, c.problem)
			}
		})
	}
	for _, c := range ordinary {
		t.Run(name(c.path), func(t *testing.T) {
			tb := tabs.visit(t, srv.URL+c.path)
			if c.inFrame() {
				tb.frame(framed).focus("f")
				if p := tb.probe(tb.top(), "tok"); !p.ActiveIsFrame || p.Field.Problem != "" {
					t.Fatalf("top probe = %+v; want a usable focused frame element", p)
				}
				return
			}
			tb.focus(c.field)
			tb.settle() // focusing may start transitions (a floating label moves)
			p := tb.probe(tb.top(), "tok")
			if c.path == "/ok/closed-shadow-root" {
				// This world cannot see into a closed shadow root: the
				// probe says so, and the CDP fallback resolves the root
				// (tests/suites/cdpe2e TestBrowser/ClosedShadowRoot).
				if p.Field.Kind != "other" || !p.ClosedHost {
					t.Fatalf("probe = %+v; want the shadow host, flagged closedHost", p)
				}
				return
			}
			if p.Field.Kind != "password" || p.Field.Problem != "" {
				t.Fatalf("probe field = %+v; want a usable password field", p.Field)
			}
			if v := tb.insert(tb.top(), "tok", srv.URL, "password", secret); !v.Inserted || !v.Matched {
				t.Fatalf("insert = %+v; want inserted and matched", v)
			}
			if !tb.holds(c.field, secret) {
				t.Fatal("value differed")
			}
		})
	}
}

// extensionPage is one browser's tab as the extension's tests reach it:
// the host's requests go to the extension, and the page's own world is
// reached to focus and check the field. Each case loads its page first.
type extensionPage interface {
	// load navigates the tab to url for the case t; the field is in the
	// framed page when inFrame.
	load(t *testing.T, url string, inFrame bool)
	// focus focuses the main-world expression field in the field's frame.
	focus(field string)
	// settle waits until the top page's animations have finished.
	settle()
	// empty reports whether #f, in the field's frame, is empty.
	empty() bool
	// holds reports whether field, in the field's frame, holds exactly value.
	holds(field string, value []byte) bool
	// ask hands msg (without an id) to the extension as the host sends it
	// and returns the reply.
	ask(msg map[string]any) map[string]any
}

// judgedByExtension runs the visibility pages through the extension as
// the host does: each trick is refused at inspect and at insert (in the
// page and on the frame element above it) and the field stays empty;
// each ordinary page is filled. It returns every reply, for the leak scan.
func judgedByExtension(t *testing.T, x extensionPage, site string, tricks []trick, secret []byte) []map[string]any {
	var replies []map[string]any
	ask := func(t *testing.T, msg map[string]any) map[string]any {
		t.Helper()
		r := x.ask(msg)
		replies = append(replies, r)
		return r
	}
	// judged inspects the focused field, wanting problem, and inserts
	// with then none (these pages check the field itself, so nothing is
	// submitted or cleared).
	judged := func(t *testing.T, problem string) map[string]any {
		t.Helper()
		r := ask(t, map[string]any{"type": "inspect"})
		if f, _ := r["field"].(map[string]any); r["type"] != "inspected" || f["kind"] != "password" || f["problem"] != problem {
			t.Fatalf("inspect = %v; want a password field with problem %q", r, problem)
		}
		return ask(t, map[string]any{"type": "insert", "tab": r["tab"], "frame": r["frame"], "token": r["token"],
			"origins": r["origins"], "kind": "password", "form": r["form"], "then": "none", "value": string(secret)})
	}
	refused := func(path, problem string, inFrame bool) {
		t.Run(name(path), func(t *testing.T) {
			x.load(t, site+path, inFrame)
			x.focus("f")
			if v := judged(t, problem); v["type"] != "not_inserted" || v["reason"] != "not_usable" {
				t.Fatalf("insert = %v; want not_inserted not_usable", v)
			}
			if !x.empty() {
				what := "the field"
				if inFrame {
					what = "the framed field"
				}
				t.Error(what + " changed")
			}
		})
	}
	for _, p := range tricks {
		refused(p.path, p.problem, false)
	}
	for _, p := range frameTricks {
		refused(p.path, p.problem, true)
	}
	for _, p := range ordinary {
		t.Run(name(p.path), func(t *testing.T) {
			field := p.field
			if p.inFrame() {
				field = "f"
			}
			x.load(t, site+p.path, p.inFrame())
			x.focus(field)
			x.settle() // focusing may start transitions (a floating label moves)
			if v := judged(t, ""); v["type"] != "inserted" || v["matched"] != true {
				t.Fatalf("insert = %v; want inserted and matched", v)
			}
			if !x.holds(field, secret) {
				t.Fatal("value differed")
			}
		})
	}
	return replies
}

// TestVisibilityExtension asks the extension's service worker, as the host
// does: the tricks are refused at inspect and at insert, in the page and
// on the frame element above it; the ordinary pages are filled, the
// closed shadow root reached with chrome.dom.
func TestVisibilityExtension(t *testing.T) {
	ctx := testContext(t)
	srv := serve(t, testPages)
	c, bctx := startBrowser(t, ctx, true)
	secret := leakscan.NewSecret(t)
	defer clear(secret)
	x := &chromiumExtensionPage{tabs: shareTab(t, bctx), w: attachWorker(t, ctx, bctx),
		framed: strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/password"}

	replies := judgedByExtension(t, x, srv.URL, append(tricks, chromiumTricks...), secret)

	c.Stop()
	out, _ := json.Marshal(replies)
	leakscan.Bytes(t, secret, "the worker's replies", out)
	leakscan.Bytes(t, secret, "the browser's output", []byte(c.Output()))
	leakscan.Dirs(t, secret, c.UserDataDir)
}

// chromiumExtensionPage hands the host's requests straight to the service
// worker's handler.
type chromiumExtensionPage struct {
	tabs     *oneTab
	w        *worker
	framed   string // the framed page's URL
	tb, hold *tab   // the case's page, and the frame that holds its field
	id       int
}

func (c *chromiumExtensionPage) load(t *testing.T, url string, inFrame bool) {
	c.tb = c.tabs.visit(t, url)
	c.hold = c.tb
	if inFrame {
		c.hold = c.tb.frame(c.framed)
	}
}

func (c *chromiumExtensionPage) focus(field string) { c.hold.focus(field) }
func (c *chromiumExtensionPage) settle()            { c.tb.settle() }
func (c *chromiumExtensionPage) empty() bool        { return c.hold.eval(`f.value === ""`) }
func (c *chromiumExtensionPage) holds(field string, value []byte) bool {
	return c.hold.holds(field, value)
}

func (c *chromiumExtensionPage) ask(msg map[string]any) map[string]any {
	c.id++
	msg["id"] = c.id
	var r map[string]any
	(&worker{t: c.tb.t, ctx: c.w.ctx}).call(&r, "function (msg) { return answer(msg); }", msg)
	return r
}

// TestVisibilityFirefox runs the same pages in Firefox ESR through the
// extension and a real native-messaging port. Firefox has no
// IntersectionObserver v2; the hit tests, the styles and the scan of what
// paints over the field decide there, and the closed shadow root is
// reached with Element.openOrClosedShadowRoot.
func TestVisibilityFirefox(t *testing.T) {
	f := startFirefox(t)
	srv := serve(t, testPages)
	secret := leakscan.NewSecret(t)
	defer clear(secret)

	replies := judgedByExtension(t, &firefoxExtensionPage{tab: f.tab, h: f.h, id: 10}, srv.URL, tricks, secret)

	ff := f.ff
	ff.Stop()
	out, _ := json.Marshal(replies)
	leakscan.Bytes(t, secret, "the extension's replies", out)
	leakscan.Bytes(t, secret, "the browser's output", []byte(ff.Output()))
	leakscan.Dirs(t, secret, ff.Profile, f.root)
}

// firefoxExtensionPage plays the native host over the extension's port.
type firefoxExtensionPage struct {
	tab   *firefoxTab
	h     *hostConn
	tb    *firefoxTab // the tab, failing the case's test
	where string      // the browsing context that holds the field
	id    int
}

func (f *firefoxExtensionPage) load(t *testing.T, url string, inFrame bool) {
	f.tb = &firefoxTab{t: t, ctx: f.tab.ctx, ff: f.tab.ff, id: f.tab.id}
	f.tb.navigate(url)
	f.where = f.tb.id
	if inFrame {
		f.where = f.tb.child()
	}
}

func (f *firefoxExtensionPage) focus(field string) {
	f.tb.callIn(f.where, `function () { (`+field+`).focus({preventScroll: true}); return true; }`)
}

func (f *firefoxExtensionPage) settle() {
	f.tb.callIn(f.tb.id, `function () { return Promise.all(document.getAnimations().map((a) => a.finished)).then(() => true); }`)
}

func (f *firefoxExtensionPage) empty() bool {
	return f.tb.callIn(f.where, `function () { return document.getElementById("f").value === ""; }`)
}

func (f *firefoxExtensionPage) holds(field string, value []byte) bool {
	return f.tb.callIn(f.where, `function (v) { return fg.is(`+field+`, v); }`, string(value))
}

func (f *firefoxExtensionPage) ask(msg map[string]any) map[string]any {
	f.id++
	msg["id"] = f.id
	h := &hostConn{t: f.tb.t, ctx: f.h.ctx, conn: f.h.conn} // fails the case, not the test
	h.send(msg)
	return h.read()
}

// child is the browsing context of the tab's first iframe.
func (ft *firefoxTab) child() string {
	ft.t.Helper()
	var tree struct {
		Contexts []struct {
			Children []struct {
				Context string `json:"context"`
			} `json:"children"`
		} `json:"contexts"`
	}
	if err := ft.ff.Call(ft.ctx, "browsingContext.getTree", map[string]any{"root": ft.id, "maxDepth": 1}, &tree); err != nil {
		ft.t.Fatal(err)
	}
	if len(tree.Contexts) == 0 || len(tree.Contexts[0].Children) == 0 {
		ft.t.Fatal("the page has no iframe")
	}
	return tree.Contexts[0].Children[0].Context
}
