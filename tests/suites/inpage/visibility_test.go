package inpage

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

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
	otherSite := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	secret := leakscan.NewSecret(t)
	defer clear(secret)

	for _, c := range append(tricks, chromiumTricks...) {
		t.Run(name(c.path), func(t *testing.T) {
			tb := openTab(t, bctx, srv.URL+c.path)
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
			tb := openTab(t, bctx, srv.URL+c.path)
			frameTab(t, ctx, bctx, otherSite+"/password").focus("f")
			p := tb.probe(tb.top(), "tok")
			if !p.ActiveIsFrame || p.Field.Problem != c.problem {
				t.Fatalf("top probe = %+v; want the focused frame element with problem %q", p, c.problem)
			}
		})
	}
	for _, c := range ordinary {
		t.Run(name(c.path), func(t *testing.T) {
			tb := openTab(t, bctx, srv.URL+c.path)
			if c.inFrame() {
				frameTab(t, ctx, bctx, otherSite+"/password").focus("f")
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
				// (tests/suites/cdpe2e TestClosedShadowRoot).
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

// TestVisibilityExtension asks the extension's service worker, as the host
// does: the tricks are refused at inspect and at insert, in the page and
// on the frame element above it; the ordinary pages are filled, the
// closed shadow root reached with chrome.dom.
func TestVisibilityExtension(t *testing.T) {
	ctx := testContext(t)
	srv := serve(t, testPages)
	c, bctx := startBrowser(t, ctx, true)
	w := attachWorker(t, ctx, bctx)
	otherSite := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	secret := leakscan.NewSecret(t)
	defer clear(secret)
	var replies []reply
	ask := func(msg map[string]any) reply {
		r := w.answer(msg)
		replies = append(replies, r)
		return r
	}
	insert := func(r reply) reply {
		// then none: these pages check the field itself, so nothing is
		// submitted or cleared.
		return ask(map[string]any{"id": 2, "type": "insert", "tab": r.Tab, "frame": r.Frame,
			"token": r.Token, "origins": r.Origins, "kind": r.Field.Kind, "form": r.Form, "then": "none", "value": string(secret)})
	}
	refused := func(t *testing.T, problem string) {
		t.Helper()
		r := ask(map[string]any{"id": 1, "type": "inspect"})
		if r.Type != "inspected" || r.Field.Kind != "password" || r.Field.Problem != problem {
			t.Fatalf("inspect = %+v; want a password field with problem %q", r, problem)
		}
		if v := insert(r); v.Type != "not_inserted" || v.Reason != "not_usable" {
			t.Fatalf("insert = %+v; want not_inserted not_usable", v)
		}
	}

	for _, p := range append(tricks, chromiumTricks...) {
		t.Run(name(p.path), func(t *testing.T) {
			tb := openTab(t, bctx, srv.URL+p.path)
			tb.focus("f")
			refused(t, p.problem)
			if !tb.eval(`f.value === ""`) {
				t.Error("the field changed")
			}
		})
	}
	for _, p := range frameTricks {
		t.Run(name(p.path), func(t *testing.T) {
			openTab(t, bctx, srv.URL+p.path)
			fr := frameTab(t, ctx, bctx, otherSite+"/password")
			fr.focus("f")
			refused(t, p.problem)
			if !fr.eval(`f.value === ""`) {
				t.Error("the framed field changed")
			}
		})
	}
	for _, p := range ordinary {
		t.Run(name(p.path), func(t *testing.T) {
			tb := openTab(t, bctx, srv.URL+p.path)
			field := tb
			if p.inFrame() {
				field = frameTab(t, ctx, bctx, otherSite+"/password")
				field.focus("f")
			} else {
				tb.focus(p.field)
			}
			tb.settle() // focusing may start transitions (a floating label moves)
			r := ask(map[string]any{"id": 1, "type": "inspect"})
			if r.Type != "inspected" || r.Field.Kind != "password" || r.Field.Problem != "" {
				t.Fatalf("inspect = %+v; want a usable password field", r)
			}
			if v := insert(r); v.Type != "inserted" || !v.Matched {
				t.Fatalf("insert = %+v; want inserted and matched", v)
			}
			if !field.holds(map[bool]string{true: "f", false: p.field}[p.inFrame()], secret) {
				t.Fatal("value differed")
			}
		})
	}

	c.Stop()
	out, _ := json.Marshal(replies)
	leakscan.Bytes(t, secret, "the worker's replies", out)
	leakscan.Bytes(t, secret, "the browser's output", []byte(c.Output()))
	leakscan.Dirs(t, secret, c.UserDataDir)
}

// callIn calls the function declaration fn (which may return a promise)
// in the browsing context id's page world and returns its boolean result.
func (ft *firefoxTab) callIn(id, fn string) bool {
	ft.t.Helper()
	var res struct {
		Type   string    `json:"type"`
		Result bidiValue `json:"result"`
	}
	err := ft.ff.Call(ft.ctx, "script.callFunction", map[string]any{
		"functionDeclaration": fn, "awaitPromise": true, "target": map[string]string{"context": id},
	}, &res)
	if err != nil || res.Type != "success" || res.Result.Type != "boolean" {
		ft.t.Fatalf("call in the page: %v (%s)", err, res.Type)
	}
	return string(res.Result.Value) == "true"
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

// TestVisibilityFirefox runs the same pages in Firefox ESR through the
// extension and a real native-messaging port. Firefox has no
// IntersectionObserver v2; the hit tests, the styles and the scan of what
// paints over the field decide there, and the closed shadow root is
// reached with Element.openOrClosedShadowRoot.
func TestVisibilityFirefox(t *testing.T) {
	ctx := testContext(t)
	srv := serve(t, testPages)
	sock, ln := listenHost(t)
	hosts := acceptHosts(t, ctx, ln)
	root := t.TempDir()
	env := append(browser.BaseEnv(root), fakeHostEnv+"="+sock)
	installFakeHost(t, filepath.Join(root, "home", ".mozilla", "native-messaging-hosts"), "allowed_extensions", manifest.FirefoxID)
	ff := browser.StartFirefox(t, ctx, browser.FirefoxOptions{Env: env})
	secret := leakscan.NewSecret(t)
	defer clear(secret)
	dir, err := filepath.Abs(extensionDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := ff.Call(ctx, "webExtension.install", map[string]any{"extensionData": map[string]string{"type": "path", "path": dir}}, nil); err != nil {
		t.Fatalf("install the extension: %v", err)
	}
	h := nextHost(t, ctx, hosts)
	h.expect(map[string]any{"type": "hello"})
	tab := firstFirefoxTab(t, ctx, ff)
	var replies []map[string]any
	id := 10
	// Each subtest talks through copies that fail it, not the parent.
	ask := func(t *testing.T, msg map[string]any) map[string]any {
		t.Helper()
		id++
		msg["id"] = id
		h := &hostConn{t: t, ctx: h.ctx, conn: h.conn}
		h.send(msg)
		r := h.read()
		replies = append(replies, r)
		return r
	}
	in := func(t *testing.T) *firefoxTab { return &firefoxTab{t: t, ctx: ctx, ff: ff, id: tab.id} }
	inspect := func(t *testing.T, problem string) map[string]any {
		t.Helper()
		r := ask(t, map[string]any{"type": "inspect"})
		if f, _ := r["field"].(map[string]any); r["type"] != "inspected" || f["kind"] != "password" || f["problem"] != problem {
			t.Fatalf("inspect = %v; want a password field with problem %q", r, problem)
		}
		return r
	}
	insert := func(t *testing.T, r map[string]any) map[string]any {
		t.Helper()
		return ask(t, map[string]any{"type": "insert", "tab": r["tab"], "frame": r["frame"], "token": r["token"],
			"origins": r["origins"], "kind": "password", "form": r["form"], "then": "none", "value": string(secret)})
	}
	const focus = `function () { const f = window.field ? field() : document.getElementById("f"); f.focus({preventScroll: true}); return true; }`
	const settled = `function () { return Promise.all(document.getAnimations().map((a) => a.finished)).then(() => true); }`
	const empty = `function () { return document.getElementById("f").value === ""; }`

	for _, p := range tricks {
		t.Run(name(p.path), func(t *testing.T) {
			tab := in(t)
			tab.navigate(srv.URL + p.path)
			tab.callIn(tab.id, focus)
			if v := insert(t, inspect(t, p.problem)); v["type"] != "not_inserted" || v["reason"] != "not_usable" {
				t.Fatalf("insert = %v; want not_inserted not_usable", v)
			}
			if !tab.callIn(tab.id, empty) {
				t.Error("the field changed")
			}
		})
	}
	for _, p := range frameTricks {
		t.Run(name(p.path), func(t *testing.T) {
			tab := in(t)
			tab.navigate(srv.URL + p.path)
			fr := tab.child()
			tab.callIn(fr, focus)
			if v := insert(t, inspect(t, p.problem)); v["type"] != "not_inserted" || v["reason"] != "not_usable" {
				t.Fatalf("insert = %v; want not_inserted not_usable", v)
			}
			if !tab.callIn(fr, empty) {
				t.Error("the framed field changed")
			}
		})
	}
	for _, p := range ordinary {
		t.Run(name(p.path), func(t *testing.T) {
			tab := in(t)
			tab.navigate(srv.URL + p.path)
			where, field := tab.id, p.field
			if p.inFrame() {
				where, field = tab.child(), "f"
			}
			tab.callIn(where, focus)
			tab.callIn(tab.id, settled) // focusing may start transitions (a floating label moves)
			if v := insert(t, inspect(t, "")); v["type"] != "inserted" || v["matched"] != true {
				t.Fatalf("insert = %v; want inserted and matched", v)
			}
			if !tab.callInWith(where, `function (v) { return fg.is(`+field+`, v); }`, string(secret)) {
				t.Fatal("value differed")
			}
		})
	}

	ff.Stop()
	out, _ := json.Marshal(replies)
	leakscan.Bytes(t, secret, "the extension's replies", out)
	leakscan.Bytes(t, secret, "the browser's output", []byte(ff.Output()))
	leakscan.Dirs(t, secret, ff.Profile, root)
}

// callInWith is callIn with one string argument.
func (ft *firefoxTab) callInWith(id, fn, arg string) bool {
	ft.t.Helper()
	var res struct {
		Type   string    `json:"type"`
		Result bidiValue `json:"result"`
	}
	err := ft.ff.Call(ft.ctx, "script.callFunction", map[string]any{
		"functionDeclaration": fn, "awaitPromise": false, "target": map[string]string{"context": id},
		"arguments": []map[string]string{{"type": "string", "value": arg}},
	}, &res)
	if err != nil || res.Type != "success" || res.Result.Type != "boolean" {
		ft.t.Fatalf("call in the page: %v (%s)", err, res.Type)
	}
	return string(res.Result.Value) == "true"
}
