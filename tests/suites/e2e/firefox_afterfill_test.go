//go:build linux

package e2e

import (
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

// afterFill runs every scenario of TestChromiumAfterFill in this Firefox:
// the recording login site filled through the real extension and host,
// where the service must receive the value exactly once where a login
// happens (never otherwise), the page must hold nothing afterwards (back
// navigation included), and no output, log or file may hold it.
func (fx *firefox) afterFill(t *testing.T) {
	login, other := loginSite(t)
	const svc = "127.0.0.3" // the prompt is on 127.0.0.1
	ctx := fx.ctx

	// fillPage opens path on the login site, focuses focus, asks with args
	// and answers the prompt with secret.
	fillPage := func(t *testing.T, path, focus string, secret []byte, args ...string) (bidiTab, fill.Result, int) {
		t.Helper()
		tb := fx.open(t, login.URL+path)
		tb.focus(focus)
		a, n := fx.request(t, append([]string{"--service", svc}, args...)...)
		p := fx.awaitPrompt(t, n)
		p.send(secret)
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		fx.closed(t, p)
		return tb, res, code
	}
	pw := `document.getElementById("pw")`

	t.Run("classic POST", func(t *testing.T) {
		secret := fx.secret(t)
		login.SetRight(secret)
		tb, res, code := fillPage(t, "/classic", pw, secret)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "the form was submitted and the page navigated away")
		wantSubmit(t, res, true, true)
		tb.waitWelcome()
		if login.Logins("/classic/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
		tb.goBack("pw")
		tb.leftNothing("pw", secret)
	})

	t.Run("react controlled form, right password", func(t *testing.T) {
		secret := fx.secret(t)
		login.SetRight(secret)
		tb, res, code := fillPage(t, "/react", pw, secret)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "the page removed or emptied the field")
		wantSubmit(t, res, true, false)
		tb.waitWelcome()
		if login.Logins("/api/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
		tb.leftNothing("pw", secret)
	})

	t.Run("react controlled form, wrong password", func(t *testing.T) {
		secret := fx.secret(t)
		login.SetRight(fx.secret(t))
		tb, res, code := fillPage(t, "/react", pw, secret)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "fillgate cleared it")
		wantSubmit(t, res, true, false)
		if login.Logins("/api/login", secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
		tb.leftNothing("pw", secret)
		if !tb.eval(`stateIs("") && document.getElementById("error") !== null`) {
			t.Error("the component's state still holds a value, or the page showed no error")
		}
	})

	t.Run("two-step login", func(t *testing.T) {
		secret := fx.secret(t)
		login.SetRight(secret)
		tb := fx.open(t, login.URL+"/step1")
		tb.eval(`(u => { u.value = "ada"; u.form.requestSubmit(); return true; })(document.getElementById("user"))`)
		tb.await(`function () { return location.pathname === "/step2" && document.readyState === "complete" && document.getElementById("pw") !== null; }`)
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc)
		p := fx.awaitPrompt(t, n)
		p.send(secret)
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "navigated away")
		fx.closed(t, p)
		tb.waitWelcome()
		if login.Logins("/step2/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
		tb.goBack("pw")
		tb.leftNothing("pw", secret)
	})

	t.Run("one-time code", func(t *testing.T) {
		code := fx.codeSecret(t, 6)
		login.SetRight(code)
		tb, res, exit := fillPage(t, "/otp", `document.getElementById("otp")`, code, "--field", "otp")
		wantResult(t, res, exit, fill.StatusOK, svc, fill.FieldOTP, "navigated away")
		tb.waitWelcome()
		if login.Logins("/otp/verify", code) != 1 || login.Carrying(code) != 1 {
			t.Fatalf("the service got the code %d times; want once", login.Carrying(code))
		}
		tb.goBack("otp")
		tb.leftNothing("otp", code)
	})

	for _, c := range []struct{ name, path, endpoint string }{
		{"six boxes with a button", "/split", "/otp/verify"},
		{"six boxes that submit themselves", "/split-auto", "/api/otp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := fx.codeSecret(t, 6)
			login.SetRight(code)
			tb, res, exit := fillPage(t, c.path, `document.getElementById("b0")`, code, "--field", "otp")
			wantResult(t, res, exit, fill.StatusOK, svc, fill.FieldOTP, "submitted")
			tb.waitWelcome()
			if login.Logins(c.endpoint, code) != 1 || login.Carrying(code) != 1 {
				t.Fatalf("the service got the code %d times; want once", login.Carrying(code))
			}
		})
	}

	t.Run("required checkbox left unchecked", func(t *testing.T) {
		secret := fx.secret(t)
		tb, res, code := fillPage(t, "/required", pw, secret)
		wantResult(t, res, code, fill.StatusFailed, svc, fill.FieldPassword, `validation stopped the submit at the field "I accept the terms"`)
		wantSubmit(t, res, false, false)
		if login.Carrying(secret) != 0 {
			t.Fatal("the service got the value although the submit was stopped")
		}
		tb.leftNothing("pw", secret)
	})

	t.Run("field in no form", func(t *testing.T) {
		secret := fx.secret(t)
		login.SetRight(secret)
		tb, res, code := fillPage(t, "/noform", pw, secret)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "navigated away")
		tb.waitWelcome()
		if login.Logins("/api/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
	})

	t.Run("then none", func(t *testing.T) {
		secret := fx.secret(t)
		tb, res, code := fillPage(t, "/classic", pw, secret, "--then", "none")
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "nothing was submitted (then none): the page, and any tool that reads it")
		wantSubmit(t, res, false, false)
		if !tb.holds(pwHolds, secret) || login.Carrying(secret) != 0 {
			t.Fatal("the value is not in the field, or it was sent")
		}
		tb.eval(`document.getElementById("pw").value = "", true`) // the finish scan is the profile's
	})

	// Unlike Chromium, where the call in a removed frame ends without an
	// answer (reported as unconfirmed), Firefox fires pagehide in the
	// frame before it goes and delivers the in-page function's answer:
	// the submit is confirmed.
	t.Run("the frame goes away during the call", func(t *testing.T) {
		secret := fx.secret(t)
		login.SetRight(secret)
		tb, res, code := fillPage(t, "/frame-host", `document.getElementById("fr").contentDocument.getElementById("pw")`, secret)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "the form was submitted and the page navigated away")
		wantSubmit(t, res, true, true)
		if login.Logins("/api/login", secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
		if !tb.eval(`document.getElementById("fr") === null`) {
			t.Error("control: the frame is still there")
		}
	})

	// Refused before anything is asked: the form would send the value
	// elsewhere.
	for _, c := range []struct{ name, path, detail string }{
		{"form posts to another origin", "/other-origin", "sends it to " + other.URL},
		{"formaction to another origin", "/formaction", "The submit button of the form"},
		{"form= attribute", "/form-attr", "belongs to a form elsewhere"},
		{"target into a frame", "/target-frame", `into another frame or window (target "side")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			posts := other.Requests("/classic/login") + login.Requests("/classic/login")
			res := fx.refusedAtOnce(t, login.URL+c.path, pw, svc, c.detail)
			if res.Submitted != nil || res.Navigated != nil {
				t.Errorf("a refusal says submitted/navigated: %+v", res)
			}
			if other.Requests("/classic/login")+login.Requests("/classic/login") != posts {
				t.Error("something was posted")
			}
		})
	}
}

// waitWelcome waits for the login site's welcome page (or text).
func (b bidiTab) waitWelcome() {
	b.t.Helper()
	b.await(`function () { return document.getElementById("welcome") !== null; }`)
}

// goBack goes back in the tab's history, as the person pressing Back
// would, and waits until the page with field id shows again.
func (b bidiTab) goBack(id string) {
	b.t.Helper()
	if err := b.ff.Call(b.ctx, "browsingContext.traverseHistory", map[string]any{"context": b.id, "delta": -1}, nil); err != nil {
		b.t.Fatalf("go back: %v", err)
	}
	b.await(`function () { return location.pathname !== "/welcome" && document.readyState === "complete" && document.getElementById("` + id + `") !== null; }`)
}

// leftNothing checks, in the page, that no input holds the secret and the
// field id is empty or gone.
func (b bidiTab) leftNothing(id string, secret []byte) {
	b.t.Helper()
	if !b.holds(`function (v) { return !fg.holds(v) && fg.left("`+id+`"); }`, secret) {
		b.t.Error("the page still holds the value")
	}
}
