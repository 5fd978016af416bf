package inpage

import (
	"encoding/json"
	"strings"
	"testing"
)

// hintPages are login fields for the probe's hint and the "shown" op.
var hintPages = map[string]string{
	"/named":     `<form><input name=user value=ada><input id=pw name=secret type=password></form>`,
	"/prefilled": `<input id=f type=password value="an older value">`,
	"/no-names":  `<input type=password autofocus>`,
	"/long":      `<input id="` + strings.Repeat("i", 200) + `" name="` + strings.Repeat("n", 200) + `" type=password>`,
	"/otp":       `<input id=code name=otp autocomplete=one-time-code>`,
	"/split":     splitBoxes,
	"/username":  `<input id=f name=user autocomplete=username>`,
	// What a person sees: one password field and two code entries (a
	// field and a row of boxes); the others are not shown.
	"/shown": `<form><input type=password><input type=password style="display:none">` +
		`<input type=password style="visibility:hidden"><input type=password style="opacity:0">` +
		`<input type=password style="width:0;height:0;padding:0;border:0">` +
		`<input autocomplete=one-time-code><input autocomplete=one-time-code hidden></form>` + splitBoxes,
	"/none-shown": `<p>Welcome back.</p><input type=password style="display:none"><input type=search>`,
}

// TestProbeHintAndShown: the probe names a password or one-time-code
// field by its id and name (the clean room finds the same field with
// them), its first box for a row of code boxes, each cut to 128
// characters, never its value, and nothing for another field; "shown"
// counts the login fields a person sees in the document, a row of code
// boxes once.
func TestProbeHintAndShown(t *testing.T) {
	ctx := testContext(t)
	srv := serve(t, hintPages)
	_, bctx := startBrowser(t, ctx, false)
	tabs := shareTab(t, bctx)

	type hint struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	for _, c := range []struct {
		path, focus string
		want        *hint
	}{
		{"/named", "pw", &hint{"pw", "secret"}},
		{"/prefilled", "f", &hint{"f", ""}},
		{"/no-names", "document.querySelector('input')", &hint{}},
		{"/long", "document.querySelector('input')", &hint{strings.Repeat("i", 128), strings.Repeat("n", 128)}},
		{"/otp", "code", &hint{"code", "otp"}},
		{"/split", "b3", &hint{"b0", ""}},
		{"/username", "f", nil},
	} {
		t.Run(c.path, func(t *testing.T) {
			tb := tabs.visit(t, srv.URL+c.path)
			tb.focus(c.focus)
			res := tb.inpage(tb.top(), "probe", map[string]string{"token": "tok"}, true)
			var p struct {
				Field struct {
					Kind string          `json:"kind"`
					Hint json.RawMessage `json:"hint"`
				} `json:"field"`
			}
			tb.decode(res, &p)
			if strings.Contains(string(res.Value), "an older value") {
				t.Fatal("the probe's answer holds the field's value")
			}
			if c.want == nil {
				if p.Field.Hint != nil {
					t.Fatalf("the probe hints %s for a %s field; want no hint", p.Field.Hint, p.Field.Kind)
				}
				return
			}
			var got hint
			if err := json.Unmarshal(p.Field.Hint, &got); err != nil || got != *c.want {
				t.Fatalf("the probe hints %s (%v); want %+v", p.Field.Hint, err, *c.want)
			}
		})
	}

	for path, want := range map[string][2]int{"/shown": {1, 2}, "/none-shown": {0, 0}} {
		t.Run("shown "+path, func(t *testing.T) {
			tb := tabs.visit(t, srv.URL+path)
			var got struct {
				URL      string `json:"url"`
				Origin   string `json:"origin"`
				Password int    `json:"password"`
				Code     int    `json:"code"`
			}
			tb.decode(tb.inpage(tb.top(), "shown", nil, true), &got)
			if got.URL != srv.URL+path || got.Origin != srv.URL || got.Password != want[0] || got.Code != want[1] {
				t.Fatalf("shown = %+v; want %d password and %d code fields shown on %s", got, want[0], want[1], srv.URL+path)
			}
		})
	}
}
