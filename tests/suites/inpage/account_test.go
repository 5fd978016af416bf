package inpage

import (
	"strings"
	"testing"
)

// accountPages show (or do not show) the user name a login form is for.
// The focused field is always #f.
var accountPages = map[string]string{
	"/autocomplete": `<form><input name=x autocomplete=username value="alice@example.com"><input id=f type=password></form>`,
	"/email":        `<form><input type=email value=" bob@example.com "><input id=f type=password></form>`,
	"/by-name":      `<form><input id=login value="carol"><input id=f type=password></form>`,
	"/hidden":       `<form><input id=f type=password><input type=hidden autocomplete=username value="dave"></form>`,
	"/nearest": `<form><input name=user value="first"><input type=email value="second@example.com">` +
		`<input id=f type=password></form>`,
	"/code":         `<form><input type=hidden autocomplete="username" value="erin"><input id=f autocomplete=one-time-code></form>`,
	"/after":        `<form><input id=f type=password><input name=user value="after"></form>`,
	"/other-form":   `<form><input name=user value="elsewhere"></form><form><input id=f type=password></form>`,
	"/no-form":      `<input name=user value="nobody"><input id=f type=password>`,
	"/a-password":   `<form><input name=user type=password value="not-an-account"><input id=f type=password></form>`,
	"/a-code":       `<form><input name=username autocomplete=one-time-code value="123456"><input id=f type=password></form>`,
	"/new-password": `<form><input name=user autocomplete=new-password value="typed-secret"><input id=f type=password></form>`,
	"/control":      `<form><input name=user value="al&#8238;ice"><input id=f type=password></form>`,
	"/long":         `<form><input name=user value="` + strings.Repeat("x", 257) + `"><input id=f type=password></form>`,
	"/empty":        `<form><input name=user value=""><input id=f type=password></form>`,
	"/not-a-field":  `<form><input name=remember type=checkbox value="on"><input id=f type=password></form>`,
}

// TestAccount: the probe reports the user name the focused field's form
// shows, and never a password's or a code's value.
func TestAccount(t *testing.T) {
	ctx := testContext(t)
	srv := serve(t, accountPages)
	_, bctx := startBrowser(t, ctx, false)
	tabs := shareTab(t, bctx)
	for path, want := range map[string]string{
		"/autocomplete": "alice@example.com",
		"/email":        "bob@example.com",
		"/by-name":      "carol",
		"/hidden":       "dave",
		"/nearest":      "second@example.com",
		"/code":         "erin",
		"/after":        "",
		"/other-form":   "",
		"/no-form":      "",
		"/a-password":   "",
		"/a-code":       "",
		"/new-password": "",
		"/control":      "",
		"/long":         "",
		"/empty":        "",
		"/not-a-field":  "",
	} {
		t.Run(path, func(t *testing.T) {
			tb := tabs.visit(t, srv.URL+path)
			tb.focus("f")
			if p := tb.probe(tb.top(), "tok"); p.Account != want {
				t.Errorf("account %q, want %q", p.Account, want)
			}
		})
	}
}
