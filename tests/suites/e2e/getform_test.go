//go:build linux

package e2e

import (
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

// urlClean is a page check: neither the page's URL nor a field holds the
// value v, and the field pw is empty or gone. Only the boolean comes back.
const urlClean = `function (v) {
	const h = location.href;
	return !h.includes(v) && !h.includes(encodeURIComponent(v)) && !fg.holds(v) && fg.left("pw");
}`

// formMethod fills forms that would put the value in their URL through
// the real extension and host, as an agent would with `fillgate fill`: a
// method=get form and a formmethod=get submit button are refused before
// anything is asked, the service receives nothing and the page's URL
// never holds the value; a form that names no method, on a page whose
// script does not take its submit, is not submitted with GET after the
// person answered; a method=dialog submit is no submit; and a form that
// names no method but logs in with fetch still works. TestChromium's
// finish scans the profile (History included) and every file for each
// secret.
func formMethod(t *testing.T, ch *chromium) {
	login, _ := loginSite(t)

	for _, c := range []struct{ name, path, detail string }{
		{"method=get", "/get-form", "The form around the focused field on " + login.URL + " would put the value in its URL (method=get"},
		{"formmethod=get", "/formmethod-get", "The submit button of the form around the focused field on " + login.URL + " would put the value in its URL"},
	} {
		t.Run("refused before anything is asked: "+c.name, func(t *testing.T) {
			secret := ch.secret(t)
			before := login.Requests("/classic/login")
			tb := ch.open(t, login.URL+c.path)
			tb.focus(pw)
			a, n := ch.request(t, "--service", loginSvc)
			res, code := ch.outcome(t, secret, a)
			wantResult(t, res, code, fill.StatusRefused, loginSvc, fill.FieldPassword, c.detail, "nothing was asked")
			if res.Submitted != nil || res.Navigated != nil {
				t.Errorf("a refusal says submitted/navigated: %+v", res)
			}
			noPrompt(t, ch, n)
			untouched(t, tb)
			if login.Requests("/classic/login") != before || login.Carrying(secret) != 0 {
				t.Error("something was sent to the form's action")
			}
			if !tb.eval(`location.href === "` + login.URL + c.path + `"`) {
				t.Error("the page navigated")
			}
		})
	}

	// fillPage opens path, focuses the password field, asks with --then
	// submit and answers the prompt with secret.
	fillPage := func(t *testing.T, path string, secret []byte) (page, fill.Result, int) {
		t.Helper()
		tb := ch.open(t, login.URL+path)
		tb.focus(pw)
		a, p := ask(t, ch, "--service", loginSvc, "--then", "submit")
		p.send(secret)
		res, code := ch.outcome(t, secret, a)
		ch.closed(t, p)
		return tb, res, code
	}

	t.Run("a form that names no method is not submitted with GET", func(t *testing.T) {
		secret := ch.secret(t)
		login.SetRight(secret)
		before := login.Requests("/classic/login")
		tb, res, code := fillPage(t, "/no-method", secret)
		wantResult(t, res, code, fill.StatusFailed, loginSvc, fill.FieldPassword, "fillgate cleared the field")
		wantSubmit(t, res, false, false)
		if login.Carrying(secret) != 0 || login.Requests("/classic/login") != before {
			t.Error("the form was submitted")
		}
		if !tb.holds(urlClean, secret) || !tb.eval(`location.href === "`+login.URL+`/no-method"`) {
			t.Error("the page's URL or a field holds the value, or the page navigated")
		}
		if !tb.eval(`sentEntries() === 0`) {
			t.Error("the submission's entry list was not emptied")
		}
	})

	t.Run("method=dialog is no submit", func(t *testing.T) {
		secret := ch.secret(t)
		tb, res, code := fillPage(t, "/dialog", secret)
		wantResult(t, res, code, fill.StatusFailed, loginSvc, fill.FieldPassword, "fillgate cleared the field")
		wantSubmit(t, res, false, false)
		if !tb.eval(`closedWith() === "signin"`) {
			t.Error("the dialog did not close with its button's value")
		}
		if login.Carrying(secret) != 0 || !tb.holds(urlClean, secret) {
			t.Error("the value was sent, or the page holds it")
		}
	})

	t.Run("a form that names no method and logs in with fetch", func(t *testing.T) {
		secret := ch.secret(t)
		login.SetRight(secret)
		tb, res, code := fillPage(t, "/formdata-login", secret)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "the form was submitted")
		waitWelcome(tb)
		if login.Logins("/api/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
	})
}
