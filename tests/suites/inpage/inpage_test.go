package inpage

import (
	"crypto/rand"
	"testing"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// otpCode returns a random 6-digit code.
func otpCode(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	return b
}

// TestInPage runs extension.InPageJS in CDP isolated worlds, as the CDP
// fallback does, against real pages in headless Chromium.
func TestInPage(t *testing.T) {
	ctx := testContext(t)
	srv := serve(t, testPages)
	_, bctx := startBrowser(t, ctx, false)
	tabs := shareTab(t, bctx)
	open := func(t *testing.T, path string) *tab { return tabs.visit(t, srv.URL+path) }
	secret := leakscan.NewSecret(t)
	defer clear(secret)

	// fill probes the focused field, checks the probe and inserts value.
	fill := func(t *testing.T, tb *tab, kind string, split int, value []byte) {
		t.Helper()
		top := tb.top()
		p := tb.probe(top, "tok")
		if p.Origin != srv.URL || !p.Top || len(p.Path) != 0 || p.ActiveIsFrame {
			t.Fatalf("probe = %+v; want origin %s, top, path [], no frame", p, srv.URL)
		}
		if p.Field.Kind != kind || p.Field.Split != split || p.Field.Problem != "" {
			t.Fatalf("probe field = %+v; want kind %s, split %d, usable", p.Field, kind, split)
		}
		v := tb.insert(top, "tok", srv.URL, kind, value)
		if !v.Inserted || !v.Matched || v.Reason != "" {
			t.Fatalf("insert = %+v; want inserted and matched", v)
		}
	}

	t.Run("password", func(t *testing.T) {
		tb := open(t, "/password")
		tb.focus("f")
		fill(t, tb, "password", 0, secret)
		if !tb.holds("f", secret) {
			t.Fatal("value differed")
		}
		if !tb.eval(`fg.trustedInput("f")`) {
			t.Error("no trusted input event: execCommand('insertText') was not used")
		}
		if !tb.eval(`document.activeElement === f && g.value === ""`) {
			t.Error("focus moved or the other field changed")
		}
	})

	t.Run("replaces existing content", func(t *testing.T) {
		tb := open(t, "/prefilled")
		tb.focus("f")
		fill(t, tb, "password", 0, secret)
		if !tb.holds("f", secret) {
			t.Fatal("value differed")
		}
	})

	t.Run("one-time-code", func(t *testing.T) {
		tb := open(t, "/otp")
		tb.focus("f")
		code := otpCode(t)
		fill(t, tb, "one-time-code", 0, code)
		if !tb.holds("f", code) {
			t.Fatal("value differed")
		}
	})

	t.Run("split code", func(t *testing.T) {
		tb := open(t, "/split")
		tb.focus("b0")
		code := otpCode(t)
		fill(t, tb, "one-time-code", 6, code)
		if !tb.callMain("function (v) { return code() === v; }", string(code)) {
			t.Fatal("boxes differed from the code")
		}
		if !tb.eval(`[0,1,2,3,4,5].every((i) => fg.trustedInput("b" + i))`) {
			t.Error("not every box got a trusted input event")
		}
	})

	t.Run("split code of the wrong length", func(t *testing.T) {
		tb := open(t, "/split")
		tb.focus("b0")
		p := tb.probe(tb.top(), "tok")
		if p.Field.Split != 6 {
			t.Fatalf("split = %d, want 6", p.Field.Split)
		}
		v := tb.insert(tb.top(), "tok", srv.URL, "one-time-code", []byte("12345"))
		if v.Inserted || v.Reason != "insert_failed" {
			t.Fatalf("insert = %+v; want not inserted, insert_failed", v)
		}
		if !tb.eval(`code() === ""`) {
			t.Error("some boxes were filled")
		}
	})

	t.Run("react-style controlled input", func(t *testing.T) {
		tb := open(t, "/react")
		tb.focus("f")
		fill(t, tb, "password", 0, secret)
		if !tb.callMain("function (v) { return stateIs(v); }", string(secret)) {
			t.Fatal("the component state differed from the value")
		}
	})

	t.Run("framework rejects typing: native setter fallback", func(t *testing.T) {
		tb := open(t, "/reject")
		tb.focus("f")
		fill(t, tb, "password", 0, secret)
		if !tb.callMain("function (v) { return stateIs(v); }", string(secret)) || !tb.holds("f", secret) {
			t.Fatal("the component state or the field differed from the value")
		}
		if !tb.eval(`fg.count("change") === 1`) {
			t.Error("the fallback did not dispatch exactly one change event")
		}
	})

	t.Run("open shadow root", func(t *testing.T) {
		tb := open(t, "/shadow")
		tb.focus("field()")
		fill(t, tb, "password", 0, secret)
		if !tb.holds("field()", secret) {
			t.Fatal("value differed")
		}
	})

	t.Run("same-origin iframe", func(t *testing.T) {
		tb := open(t, "/iframe")
		tb.focus("field()")
		frames := tb.frames()
		if len(frames) != 2 {
			t.Fatalf("%d frames, want 2", len(frames))
		}
		top, inner := frames[0], frames[1]
		pt := tb.probe(top, "tok")
		if !pt.ActiveIsFrame || pt.ChildIndex != 0 || pt.Field.Kind != "none" || pt.Field.Problem != "" {
			t.Fatalf("top probe = %+v; want the focused, usable iframe at index 0", pt)
		}
		pi := tb.probe(inner, "tok")
		if pi.Top || len(pi.Path) != 1 || pi.Path[0] != pt.ChildIndex || pi.Origin != srv.URL {
			t.Fatalf("inner probe = %+v; want path [0] under the top frame", pi)
		}
		if pi.ActiveIsFrame || pi.Field.Kind != "password" || pi.Field.Problem != "" {
			t.Fatalf("inner field = %+v", pi)
		}
		// activeFrame hands CDP the focused frame element itself.
		obj := tb.inpage(top, "activeFrame", nil, false)
		node, err := chromedp.Call(tb.ctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: obj.ObjectID})
		if err != nil {
			t.Fatalf("describe the active frame element: %v", err)
		}
		if node.Node.FrameID != inner {
			t.Fatalf("activeFrame names frame %s, want %s", node.Node.FrameID, inner)
		}
		v := tb.insert(inner, "tok", srv.URL, "password", secret)
		if !v.Inserted || !v.Matched {
			t.Fatalf("insert = %+v", v)
		}
		if !tb.holds("field()", secret) {
			t.Fatal("value differed")
		}
	})

	// Fields the probe must not call usable; an insert into them must not
	// happen either.
	refusals := []struct {
		name, path, setup string
		kind, problem     string
		// blurs: Chromium drops focus from a field that becomes disabled
		// or unrendered at its next style update, so the probe sees either
		// the problem or nothing focused (kind none); both are refusals.
		blurs bool
	}{
		{"username field", "/username", "", "other", "", false},
		{"readonly", "/readonly", "", "password", "readonly", false},
		{"zero size", "/hidden", "", "password", "hidden", false},
		{"1x1", "/tiny", "", "password", "tiny", false},
		{"transparent", "/transparent", "", "password", "transparent", false},
		{"opacity filter", "/filtered", "", "password", "transparent", false},
		{"paints nothing", "/unpainted", "", "password", "transparent", false},
		{"offscreen", "/offscreen", "", "password", "offscreen", false},
		{"covered", "/covered", "", "password", "covered", false},
		{"disabled", "/password", `f.disabled = true`, "password", "disabled", true},
		{"display none", "/password", `f.style.display = "none"`, "password", "hidden", true},
		{"visibility hidden", "/password", `f.style.visibility = "hidden"`, "password", "hidden", true},
	}
	for _, c := range refusals {
		t.Run("refuses "+c.name, func(t *testing.T) {
			tb := open(t, c.path)
			tb.focus("f")
			if c.setup != "" {
				tb.eval(c.setup + ", true")
			}
			p := tb.probe(tb.top(), "tok")
			want := p.Field.Kind == c.kind && p.Field.Problem == c.problem
			if c.blurs && p.Field.Kind == "none" {
				want = true
			}
			if !want {
				t.Fatalf("probe field = %+v; want kind %q, problem %q", p.Field, c.kind, c.problem)
			}
			v := tb.insert(tb.top(), "tok", srv.URL, "password", secret)
			if v.Inserted {
				t.Fatalf("insert = %+v; want refused", v)
			}
			if !tb.eval(`f.value === ""`) {
				t.Error("the field changed")
			}
		})
	}

	// Changes between probe and insert; each must stop the insert.
	changes := []struct {
		name, path, change, reason string
		origin                     string
	}{
		{"focus moved", "/password", `g.focus()`, "focus_moved", ""},
		{"focus left the page", "/password", `f.blur()`, "focus_moved", ""},
		{"element replaced", "/password", `f.replaceWith(f.cloneNode()), document.getElementById("f").focus()`, "element_gone", ""},
		{"type changed", "/password", `f.type = "text"`, "kind_changed", ""},
		{"made readonly", "/password", `f.readOnly = true`, "not_usable", ""},
		{"covered", "/password", `document.body.insertAdjacentHTML("beforeend", '<div style="position:fixed;inset:0;background:#fff"></div>')`, "not_usable", ""},
		{"other origin", "/password", "", "origin_changed", "http://127.0.0.1:1"},
	}
	for _, c := range changes {
		t.Run("insert refused: "+c.name, func(t *testing.T) {
			tb := open(t, c.path)
			tb.focus("f")
			if p := tb.probe(tb.top(), "tok"); p.Field.Kind != "password" || p.Field.Problem != "" {
				t.Fatalf("probe field = %+v", p.Field)
			}
			if c.change != "" {
				tb.eval(c.change + ", true")
			}
			origin := srv.URL
			if c.origin != "" {
				origin = c.origin
			}
			v := tb.insert(tb.top(), "tok", origin, "password", secret)
			if v.Inserted || v.Matched || v.Reason != c.reason {
				t.Fatalf("insert = %+v; want not inserted, %s", v, c.reason)
			}
			if !tb.eval(`[...document.querySelectorAll("input")].every((i) => i.value === "")`) {
				t.Error("a field changed")
			}
		})
	}

	t.Run("a token inserts once", func(t *testing.T) {
		tb := open(t, "/password")
		tb.focus("f")
		fill(t, tb, "password", 0, secret)
		v := tb.insert(tb.top(), "tok", srv.URL, "password", secret)
		if v.Inserted || v.Reason != "element_gone" {
			t.Fatalf("second insert = %+v; want element_gone", v)
		}
	})

	t.Run("unknown token", func(t *testing.T) {
		tb := open(t, "/password")
		tb.focus("f")
		tb.probe(tb.top(), "tok")
		if v := tb.insert(tb.top(), "other", srv.URL, "password", secret); v.Inserted || v.Reason != "element_gone" {
			t.Fatalf("insert = %+v; want element_gone", v)
		}
	})

	t.Run("kind asked differs from the field", func(t *testing.T) {
		tb := open(t, "/otp")
		tb.focus("f")
		tb.probe(tb.top(), "tok")
		if v := tb.insert(tb.top(), "tok", srv.URL, "password", secret); v.Inserted || v.Reason != "kind_changed" {
			t.Fatalf("insert = %+v; want kind_changed", v)
		}
	})

	t.Run("hostile page: focus on the username field", func(t *testing.T) {
		tb := open(t, "/hostile")
		tb.focus("user")
		if !tb.eval(`document.activeElement === pw && user.type === "password"`) {
			t.Fatal("control: the page's overrides are not in force in its own world")
		}
		p := tb.probe(tb.top(), "tok")
		if p.Field.Kind != "other" {
			t.Fatalf("probe field = %+v; want other (the page's overrides fooled the probe)", p.Field)
		}
		v := tb.insert(tb.top(), "tok", srv.URL, "password", secret)
		if v.Inserted || v.Reason != "kind_changed" {
			t.Fatalf("insert = %+v; want kind_changed", v)
		}
		if !tb.eval(`!stolen && fg.is(user, "") && fg.is(pw, "")`) {
			t.Error("the page's hooks ran or a field changed")
		}
	})

	t.Run("hostile page: focus on the password field", func(t *testing.T) {
		tb := open(t, "/hostile")
		tb.focus("pw")
		fill(t, tb, "password", 0, secret)
		if !tb.holds("pw", secret) {
			t.Fatal("value differed")
		}
		if !tb.eval(`!stolen`) {
			t.Error("the page's overridden value setter, execCommand or dispatchEvent was called")
		}
	})
}

// BenchmarkInPage measures one probe and one insert of the in-page function
// over CDP in an isolated world, as the CDP fallback runs them.
func BenchmarkInPage(b *testing.B) {
	ctx := testContext(b)
	srv := serve(b, testPages)
	_, bctx := startBrowser(b, ctx, false)
	tb := openTab(b, bctx, srv.URL+"/password")
	tb.focus("f")
	top := tb.top()
	secret := leakscan.NewSecret(b)
	defer clear(secret)
	for b.Loop() {
		tb.probe(top, "tok")
		if v := tb.insert(top, "tok", srv.URL, "password", secret); !v.Matched {
			b.Fatalf("insert = %+v", v)
		}
	}
}
