//go:build linux

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/loginserver"
)

// loginSite is the recording login site on two loopback origins.
func loginSite(t testing.TB) (login, other *loginserver.Server) {
	login, other = loginserver.Start(t, "127.0.0.3"), loginserver.Start(t, "127.0.0.4")
	login.SetOther(other.URL)
	other.SetOther(login.URL)
	return login, other
}

// waitWelcome waits for the welcome page (or text) in tb.
func waitWelcome(t testing.TB, tb tab) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("#welcome"))); err != nil {
		t.Fatalf("the welcome page did not show: %v", err)
	}
}

// goBack goes back in tb's history, as the person would, and waits until
// the page with field id shows again.
func goBack(t testing.TB, tb tab, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	// The navigation starts after the evaluation has answered: started
	// within it, it can destroy the page's context before the answer is
	// sent ("Inspected target navigated or closed" on a loaded machine).
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`setTimeout(() => history.back(), 0), true`)); err != nil {
		t.Fatalf("go back: %v", err)
	}
	for {
		// The evaluation fails while the page changes; the deadline bounds it.
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`location.pathname !== "/welcome" && document.readyState === "complete" && document.getElementById("`+id+`") !== null`))
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the login page did not come back: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// leftNothing checks, in the page, that no input holds the secret and the
// field id is empty or gone.
func leftNothing(t testing.TB, tb tab, id string, secret []byte) {
	t.Helper()
	if !tb.holds(`function (v) { return !fg.holds(v) && fg.left("`+id+`"); }`, secret) {
		t.Error("the page still holds the value")
	}
}

// wantSubmit checks the result's submitted and navigated.
func wantSubmit(t testing.TB, res fill.Result, submitted, navigated bool) {
	t.Helper()
	if res.Submitted == nil || res.Navigated == nil || *res.Submitted != submitted || *res.Navigated != navigated {
		t.Errorf("result %+v; want submitted %v, navigated %v", res, submitted, navigated)
	}
}

// TestChromiumAfterFill fills the recording login site through the real
// extension and host, as the agent would with `fillgate fill`, and checks
// that the service received the value exactly once where a login happens
// (never otherwise), that the page holds nothing afterwards (back
// navigation included), and that no output, log or file holds it.
func TestChromiumAfterFill(t *testing.T) {
	ctx := testContext(t, 6*time.Minute)
	ch := startChromium(t, ctx)
	login, other := loginSite(t)
	const svc = "127.0.0.3" // the prompt is on 127.0.0.1

	// fillPage opens path on the login site, focuses focus, asks with args
	// and answers the prompt with secret.
	fillPage := func(t *testing.T, path, focus string, secret []byte, args ...string) (tab, fill.Result, int) {
		t.Helper()
		tb := ch.open(t, login.URL+path)
		tb.focus(focus)
		a, n := ch.request(t, append([]string{"--service", svc}, args...)...)
		p := ch.awaitPrompt(t, n)
		p.send(secret)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		ch.closed(t, p)
		return tb, res, code
	}
	pw := `document.getElementById("pw")`

	t.Run("classic POST", func(t *testing.T) {
		secret := ch.secret(t)
		login.SetRight(secret)
		tb, res, code := fillPage(t, "/classic", pw, secret)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "the form was submitted and the page navigated away")
		wantSubmit(t, res, true, true)
		waitWelcome(t, tb)
		if login.Logins("/classic/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
		goBack(t, tb, "pw")
		leftNothing(t, tb, "pw", secret)
	})

	t.Run("react controlled form, right password", func(t *testing.T) {
		secret := ch.secret(t)
		login.SetRight(secret)
		tb, res, code := fillPage(t, "/react", pw, secret)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "the page removed or emptied the field")
		wantSubmit(t, res, true, false)
		waitWelcome(t, tb)
		if login.Logins("/api/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
		leftNothing(t, tb, "pw", secret)
	})

	t.Run("react controlled form, wrong password", func(t *testing.T) {
		secret := ch.secret(t)
		login.SetRight(ch.secret(t))
		tb, res, code := fillPage(t, "/react", pw, secret)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "fillgate cleared it")
		wantSubmit(t, res, true, false)
		if login.Logins("/api/login", secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
		leftNothing(t, tb, "pw", secret)
		if !tb.eval(`stateIs("") && document.getElementById("error") !== null`) {
			t.Error("the component's state still holds a value, or the page showed no error")
		}
	})

	t.Run("two-step login", func(t *testing.T) {
		secret := ch.secret(t)
		login.SetRight(secret)
		tb := ch.open(t, login.URL+"/step1")
		tb.eval(`(u => { u.value = "ada"; u.form.requestSubmit(); return true; })(document.getElementById("user"))`)
		if err := chromedp.Do(tb.ctx, chromedp.WaitReady(chromedp.CSS("#pw"))); err != nil {
			t.Fatalf("no password page: %v", err)
		}
		tb.focus(pw)
		a, n := ch.request(t, "--service", svc)
		p := ch.awaitPrompt(t, n)
		p.send(secret)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "navigated away")
		waitWelcome(t, tb)
		if login.Logins("/step2/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
		goBack(t, tb, "pw")
		leftNothing(t, tb, "pw", secret)
	})

	t.Run("one-time code", func(t *testing.T) {
		code := ch.codeSecret(t, 6)
		login.SetRight(code)
		tb, res, exit := fillPage(t, "/otp", `document.getElementById("otp")`, code, "--field", "otp")
		wantResult(t, res, exit, fill.StatusOK, svc, fill.FieldOTP, "navigated away")
		waitWelcome(t, tb)
		if login.Logins("/otp/verify", code) != 1 || login.Carrying(code) != 1 {
			t.Fatalf("the service got the code %d times; want once", login.Carrying(code))
		}
		goBack(t, tb, "otp")
		leftNothing(t, tb, "otp", code)
	})

	for _, c := range []struct{ name, path, endpoint string }{
		{"six boxes with a button", "/split", "/otp/verify"},
		{"six boxes that submit themselves", "/split-auto", "/api/otp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := ch.codeSecret(t, 6)
			login.SetRight(code)
			tb, res, exit := fillPage(t, c.path, `document.getElementById("b0")`, code, "--field", "otp")
			wantResult(t, res, exit, fill.StatusOK, svc, fill.FieldOTP, "submitted")
			waitWelcome(t, tb)
			if login.Logins(c.endpoint, code) != 1 || login.Carrying(code) != 1 {
				t.Fatalf("the service got the code %d times; want once", login.Carrying(code))
			}
		})
	}

	t.Run("required checkbox left unchecked", func(t *testing.T) {
		secret := ch.secret(t)
		tb, res, code := fillPage(t, "/required", pw, secret)
		wantResult(t, res, code, fill.StatusFailed, svc, fill.FieldPassword, `validation stopped the submit at the field "I accept the terms"`)
		wantSubmit(t, res, false, false)
		if login.Carrying(secret) != 0 {
			t.Fatal("the service got the value although the submit was stopped")
		}
		leftNothing(t, tb, "pw", secret)
	})

	t.Run("field in no form", func(t *testing.T) {
		secret := ch.secret(t)
		login.SetRight(secret)
		tb, res, code := fillPage(t, "/noform", pw, secret)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "navigated away")
		waitWelcome(t, tb)
		if login.Logins("/api/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
	})

	t.Run("then none", func(t *testing.T) {
		secret := ch.secret(t)
		tb, res, code := fillPage(t, "/classic", pw, secret, "--then", "none")
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "nothing was submitted (then none): the page, and any tool that reads it")
		wantSubmit(t, res, false, false)
		if !tb.holds(pwHolds, secret) || login.Carrying(secret) != 0 {
			t.Fatal("the value is not in the field, or it was sent")
		}
		tb.eval(`document.getElementById("pw").value = "", true`) // the finish scan is the profile's
	})

	t.Run("the frame goes away during the call", func(t *testing.T) {
		secret := ch.secret(t)
		login.SetRight(secret)
		tb, res, code := fillPage(t, "/frame-host", `document.getElementById("fr").contentDocument.getElementById("pw")`, secret)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "the page went away during the fill")
		wantSubmit(t, res, false, true)
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
			res := ch.refusedAtOnce(t, login.URL+c.path, pw, svc, c.detail)
			if res.Submitted != nil || res.Navigated != nil {
				t.Errorf("a refusal says submitted/navigated: %+v", res)
			}
			if other.Requests("/classic/login")+login.Requests("/classic/login") != posts {
				t.Error("something was posted")
			}
		})
	}

	ch.finish(t)
}
