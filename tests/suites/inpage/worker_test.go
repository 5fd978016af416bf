package inpage

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// TestServiceWorker hands the worker host requests (as PROTOCOL.md §2
// has them) and checks its replies and the pages.
func TestServiceWorker(t *testing.T) {
	ctx := testContext(t)
	srv := serve(t, testPages)
	c, bctx := startBrowser(t, ctx, true)
	w := attachWorker(t, ctx, bctx)
	secret := leakscan.NewSecret(t)
	defer clear(secret)
	otherSite := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	insert := func(r reply, value []byte) reply {
		t.Helper()
		return w.answer(map[string]any{"id": 9, "type": "insert", "tab": r.Tab, "frame": r.Frame, "form": r.Form, "then": "none",
			"token": r.Token, "origins": r.Origins, "kind": r.Field.Kind, "value": string(value)})
	}
	inspect := func(t *testing.T, want string) reply {
		t.Helper()
		r := w.answer(map[string]any{"id": 1, "type": "inspect"})
		if r.Type != "inspected" || r.Token == "" || r.Field.Kind != want || r.Field.Problem != "" || r.Paused {
			t.Fatalf("inspect = %+v; want a usable %s field", r, want)
		}
		return r
	}
	// onPassword opens the password page in a new tab, focuses its field
	// and inspects it.
	onPassword := func(t *testing.T) (*tab, reply) {
		t.Helper()
		tb := openTab(t, bctx, srv.URL+"/password")
		tb.focus("f")
		return tb, inspect(t, "password")
	}
	// onCrossSite opens the page framing the other site's password page in
	// a new tab, focuses the framed field (or, unless inFrame, the top
	// page's) and inspects it.
	onCrossSite := func(t *testing.T, inFrame bool) (tb, fr *tab, r reply) {
		t.Helper()
		tb = openTab(t, bctx, srv.URL+"/xsite")
		fr = tb.frame(otherSite + "/password")
		focused := tb
		if inFrame {
			focused = fr
		}
		focused.focus("f")
		return tb, fr, inspect(t, "password")
	}

	t.Run("ping and unknown requests", func(t *testing.T) {
		if r := w.answer(map[string]any{"id": 1, "type": "ping"}); r.Type != "pong" {
			t.Errorf("ping = %+v", r)
		}
		if r := w.answer(map[string]any{"id": 2, "type": "format_disk"}); r.Type != "error" || r.Error != "bad_request" {
			t.Errorf("unknown request = %+v; want error bad_request", r)
		}
	})

	t.Run("password", func(t *testing.T) {
		tb, r := onPassword(t)
		if r.Frame != 0 || len(r.Origins) != 1 || r.Origins[0] != srv.URL {
			t.Fatalf("inspect = %+v; want frame 0, origins [%s]", r, srv.URL)
		}
		if v := insert(r, secret); v.Type != "inserted" || !v.Matched {
			t.Fatalf("insert = %+v", v)
		}
		if !tb.holds("f", secret) {
			t.Fatal("value differed")
		}
	})

	t.Run("split code", func(t *testing.T) {
		tb := openTab(t, bctx, srv.URL+"/split")
		tb.focus("b0")
		r := inspect(t, "one-time-code")
		if r.Field.Split != 6 {
			t.Fatalf("split = %d, want 6", r.Field.Split)
		}
		code := otpCode(t)
		if v := insert(r, code); v.Type != "inserted" || !v.Matched {
			t.Fatalf("insert = %+v", v)
		}
		if !tb.callMain("function (v) { return code() === v; }", string(code)) {
			t.Fatal("boxes differed from the code")
		}
	})

	t.Run("cross-site iframe", func(t *testing.T) {
		tb, fr, r := onCrossSite(t, true)
		if r.Frame == 0 || len(r.Origins) != 2 || r.Origins[0] != otherSite || r.Origins[1] != srv.URL {
			t.Fatalf("inspect = %+v; want a subframe, origins [%s %s]", r, otherSite, srv.URL)
		}
		if v := insert(r, secret); v.Type != "inserted" || !v.Matched {
			t.Fatalf("insert = %+v", v)
		}
		if !fr.holds("f", secret) || !tb.eval(`f.value === ""`) {
			t.Fatal("value differed, or went to the top page")
		}
	})

	t.Run("a faint iframe makes its field unusable", func(t *testing.T) {
		openTab(t, bctx, srv.URL+"/xsite-faint").frame(otherSite + "/password").focus("f")
		r := w.answer(map[string]any{"id": 1, "type": "inspect"})
		if r.Type != "inspected" || r.Field.Kind != "password" || r.Field.Problem != "transparent" {
			t.Fatalf("inspect = %+v; want a transparent password field", r)
		}
	})

	t.Run("focus moved to another frame", func(t *testing.T) {
		tb, _, r := onCrossSite(t, true)
		tb.focus("f")
		if v := insert(r, secret); v.Type != "not_inserted" || v.Reason != "frame_changed" {
			t.Fatalf("insert = %+v; want not_inserted frame_changed", v)
		}
		if !tb.eval(`f.value === ""`) {
			t.Error("the top page's field changed")
		}
	})

	// The insert into the top frame no longer walks every frame first
	// (0463e17): the in-page insert must refuse these on its own.
	t.Run("top frame: focus moved into a cross-site iframe", func(t *testing.T) {
		tb, fr, r := onCrossSite(t, false)
		if r.Frame != 0 || len(r.Origins) != 1 {
			t.Fatalf("inspect = %+v; want the top frame", r)
		}
		fr.focus("f")
		if v := insert(r, secret); v.Type != "not_inserted" {
			t.Fatalf("insert = %+v; want not_inserted", v)
		}
		if !tb.eval(`f.value === ""`) || !fr.eval(`f.value === ""`) {
			t.Error("a field changed")
		}
	})

	for _, c := range []struct{ name, to, reason string }{
		{"top frame: same-origin navigation", srv.URL + "/password", "element_gone"},
		{"navigated to another origin", otherSite + "/password", "origin_changed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb, r := onPassword(t)
			if err := chromedp.Do(tb.ctx, chromedp.Navigate(c.to)); err != nil {
				t.Fatal(err)
			}
			tb.focus("f")
			if v := insert(r, secret); v.Type != "not_inserted" || v.Reason != c.reason {
				t.Fatalf("insert = %+v; want not_inserted %s", v, c.reason)
			}
			if !tb.eval(`f.value === ""`) {
				t.Error("the new page's field changed")
			}
		})
	}

	t.Run("top frame: document replaced with document.open", func(t *testing.T) {
		tb, r := onPassword(t)
		if !tb.eval(`(document.open(), document.write("<input id=f type=password><input id=g>"), document.close(), document.getElementById("f").focus(), true)`) {
			t.Fatal("replace the document")
		}
		if v := insert(r, secret); v.Type != "not_inserted" {
			t.Fatalf("insert = %+v; want not_inserted", v)
		}
		if !tb.eval(`document.getElementById("f").value === "" && document.getElementById("g").value === ""`) {
			t.Error("a field of the new document changed")
		}
	})

	t.Run("top frame: focus moved into a same-origin iframe", func(t *testing.T) {
		tb, r := onPassword(t)
		if !tb.eval(`(() => { const fr = document.createElement("iframe"); document.body.append(fr);
		  fr.contentDocument.body.innerHTML = "<input id=f type=password>"; fr.contentDocument.getElementById("f").focus(); return document.activeElement === fr; })()`) {
			t.Fatal("focus the frame")
		}
		if v := insert(r, secret); v.Type != "not_inserted" {
			t.Fatalf("insert = %+v; want not_inserted", v)
		}
		if !tb.eval(`f.value === "" && document.querySelector("iframe").contentDocument.getElementById("f").value === ""`) {
			t.Error("a field changed")
		}
	})

	t.Run("focus moved within the page", func(t *testing.T) {
		tb, r := onPassword(t)
		tb.focus("g")
		if v := insert(r, secret); v.Type != "not_inserted" || v.Reason != "focus_moved" {
			t.Fatalf("insert = %+v; want not_inserted focus_moved", v)
		}
	})

	t.Run("tab closed", func(t *testing.T) {
		tb, r := onPassword(t)
		if err := chromedp.Cancel(tb.ctx); err != nil {
			t.Fatalf("close the tab: %v", err)
		}
		if v := insert(r, secret); v.Type != "not_inserted" || v.Reason != "tab_gone" {
			t.Fatalf("insert = %+v; want not_inserted tab_gone", v)
		}
	})

	t.Run("paused", func(t *testing.T) {
		tb := openTab(t, bctx, srv.URL+"/password")
		tb.focus("f")
		w.call(nil, `function () { return setPaused(true); }`)
		defer w.call(nil, `function () { return setPaused(false); }`)
		r := w.answer(map[string]any{"id": 1, "type": "inspect"})
		if r.Type != "inspected" || !r.Paused {
			t.Fatalf("inspect = %+v; want paused", r)
		}
		if v := insert(r, secret); v.Type != "not_inserted" || v.Reason != "paused" {
			t.Fatalf("insert = %+v; want not_inserted paused", v)
		}
		if !tb.eval(`f.value === ""`) {
			t.Error("the field changed")
		}
	})

	t.Run("pinned tab and frame", func(t *testing.T) {
		_, r := onPassword(t)
		pinned := w.answer(map[string]any{"id": 1, "type": "inspect", "tab": r.Tab, "frame": 0})
		if pinned.Tab != r.Tab || pinned.Field.Kind != "password" {
			t.Fatalf("pinned inspect = %+v", pinned)
		}
		other := w.answer(map[string]any{"id": 1, "type": "inspect", "tab": r.Tab, "frame": 12345})
		if other.Type != "inspected" || other.Field.Kind != "none" {
			t.Fatalf("inspect pinned to an unfocused frame = %+v; want kind none", other)
		}
		if gone := w.answer(map[string]any{"id": 1, "type": "inspect", "tab": 999999}); gone.Type != "error" || gone.Error != "no_tab" {
			t.Fatalf("inspect of a missing tab = %+v; want error no_tab", gone)
		}
	})

	t.Run("a browser page cannot be scripted", func(t *testing.T) {
		openTab(t, bctx, "chrome://version")
		if r := w.answer(map[string]any{"id": 1, "type": "inspect"}); r.Type != "error" || r.Error != "no_access" {
			t.Fatalf("inspect = %+v; want error no_access", r)
		}
	})

	t.Run("prompt window", func(t *testing.T) {
		w.stopHostRetries(ctx)
		r := w.answer(map[string]any{"id": 1, "type": "open_prompt", "url": srv.URL + "/password?prompt"})
		if r.Type != "prompt_opened" || r.Window == 0 {
			t.Fatalf("open_prompt = %+v", r)
		}
		if _, err := browser.WaitTarget(ctx, bctx, "page", srv.URL+"/password?prompt"); err != nil {
			t.Fatalf("the prompt page did not open: %v", err)
		}
		var typ string
		w.call(&typ, `function (id) { return chrome.windows.get(id).then((w) => w.type); }`, r.Window)
		if typ != "popup" {
			t.Errorf("prompt window type %q, want popup", typ)
		}
		if c := w.answer(map[string]any{"id": 2, "type": "close_prompt", "window": r.Window}); c.Type != "ok" {
			t.Fatalf("close_prompt = %+v", c)
		}
		var open bool
		w.call(&open, `function (id) { return chrome.windows.get(id).then(() => true, () => false); }`, r.Window)
		if open {
			t.Error("the prompt window is still open")
		}
		for _, bad := range []string{"https://example.com/", "http://localhost:1/", "javascript:alert(1)", "chrome://settings"} {
			if r := w.answer(map[string]any{"id": 3, "type": "open_prompt", "url": bad}); r.Type != "error" || r.Error != "bad_request" {
				t.Errorf("open_prompt %s = %+v; want error bad_request", bad, r)
			}
		}
	})

	c.Stop()
	leakscan.Bytes(t, secret, "the browser's output", []byte(c.Output()))
	if n := leakscan.Dirs(t, secret, c.UserDataDir); n == 0 {
		t.Error("the leak scan read no profile files")
	}
}
