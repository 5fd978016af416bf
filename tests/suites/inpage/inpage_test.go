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

	// Fields the probe calls usable and the insert fills: each case
	// focuses its field, fills it (a code for a one-time-code field, else
	// the secret) and checks the page.
	holdsIt := func(field string) func(*testing.T, *tab, []byte) {
		return func(t *testing.T, tb *tab, value []byte) {
			if !tb.holds(field, value) {
				t.Fatal("value differed")
			}
		}
	}
	for _, c := range []struct {
		name, path, focus, kind string
		split                   int
		check                   func(t *testing.T, tb *tab, value []byte)
	}{
		{"password", "/password", "f", "password", 0, func(t *testing.T, tb *tab, value []byte) {
			holdsIt("f")(t, tb, value)
			if !tb.eval(`fg.trustedInput("f")`) {
				t.Error("no trusted input event: execCommand('insertText') was not used")
			}
			if !tb.eval(`document.activeElement === f && g.value === ""`) {
				t.Error("focus moved or the other field changed")
			}
		}},
		{"replaces existing content", "/prefilled", "f", "password", 0, holdsIt("f")},
		{"one-time-code", "/otp", "f", "one-time-code", 0, holdsIt("f")},
		{"split code", "/split", "b0", "one-time-code", 6, func(t *testing.T, tb *tab, code []byte) {
			if !tb.callMain("function (v) { return code() === v; }", string(code)) {
				t.Fatal("boxes differed from the code")
			}
			if !tb.eval(`[0,1,2,3,4,5].every((i) => fg.trustedInput("b" + i))`) {
				t.Error("not every box got a trusted input event")
			}
		}},
		{"react-style controlled input", "/react", "f", "password", 0, func(t *testing.T, tb *tab, value []byte) {
			if !tb.callMain("function (v) { return stateIs(v); }", string(value)) {
				t.Fatal("the component state differed from the value")
			}
		}},
		{"framework rejects typing: native setter fallback", "/reject", "f", "password", 0, func(t *testing.T, tb *tab, value []byte) {
			if !tb.callMain("function (v) { return stateIs(v); }", string(value)) || !tb.holds("f", value) {
				t.Fatal("the component state or the field differed from the value")
			}
			if !tb.eval(`fg.count("change") === 1`) {
				t.Error("the fallback did not dispatch exactly one change event")
			}
		}},
		{"open shadow root", "/shadow", "field()", "password", 0, holdsIt("field()")},
		{"a token inserts once", "/password", "f", "password", 0, func(t *testing.T, tb *tab, value []byte) {
			v := tb.insert(tb.top(), "tok", srv.URL, "password", value)
			if v.Inserted || v.Reason != "element_gone" {
				t.Fatalf("second insert = %+v; want element_gone", v)
			}
		}},
		{"hostile page: focus on the password field", "/hostile", "pw", "password", 0, func(t *testing.T, tb *tab, value []byte) {
			holdsIt("pw")(t, tb, value)
			if !tb.eval(`!stolen`) {
				t.Error("the page's overridden value setter, execCommand or dispatchEvent was called")
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := open(t, c.path)
			tb.focus(c.focus)
			value := secret
			if c.kind == "one-time-code" {
				value = otpCode(t)
			}
			fill(t, tb, c.kind, c.split, value)
			c.check(t, tb, value)
		})
	}

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

	// Inserts that name what the probe did not see.
	for _, c := range []struct{ name, path, token, reason string }{
		{"unknown token", "/password", "other", "element_gone"},
		{"kind asked differs from the field", "/otp", "tok", "kind_changed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := open(t, c.path)
			tb.focus("f")
			tb.probe(tb.top(), "tok")
			if v := tb.insert(tb.top(), c.token, srv.URL, "password", secret); v.Inserted || v.Reason != c.reason {
				t.Fatalf("insert = %+v; want %s", v, c.reason)
			}
		})
	}

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
