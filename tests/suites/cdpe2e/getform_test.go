package cdpe2e

import (
	"runtime"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/loginserver"
)

// urlClean is a page check: neither the page's URL nor a field holds the
// value v, and the field pw is empty.
const urlClean = `function (v) {
	const h = location.href;
	return !h.includes(v) && !h.includes(encodeURIComponent(v)) && !fg.holds(v) && fg.left("pw");
}`

// TestCLIFormMethod runs `fillgate fill --then submit` over the CDP
// fallback (no extension, the prompt in the loopback page the fake system
// opener gets, fillgate typing into the driven page with the person's
// consent: driven = "in-page", scene.policy) against forms that would put
// the value in their URL: a method=get form and a formmethod=get submit
// button are refused before anything is asked and the service receives
// nothing; a form that names
// no method, on a page whose script does not take its submit, is not
// submitted with GET after the person answered, and its tab stays on its
// page (scene.userTab checks that); a method=dialog submit is no submit;
// and a form that names no method but logs in with fetch still works.
func TestCLIFormMethod(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the CLI scenarios fake xdg-open and read /proc: Linux only")
	}
	e := newEnvWithin(t, 5*time.Minute)
	login := loginserver.Start(t, "127.0.0.3")
	const svc = "127.0.0.3"
	open := func(sc *scene, path string) *tab {
		tb := sc.userTab(login.URL + path)
		tb.eval(`document.getElementById("pw").focus(), true`)
		return tb
	}

	for _, c := range []struct{ name, path, detail string }{
		{"method=get", "/get-form", "The form around the focused field on " + login.URL + " would put the value in its URL (method=get"},
		{"formmethod=get", "/formmethod-get", "The submit button of the form around the focused field on " + login.URL + " would put the value in its URL"},
	} {
		t.Run("refused before anything is asked: "+c.name, func(t *testing.T) {
			sc := e.scene(t)
			secret := sc.secret()
			before := login.Requests("/classic/login")
			tb := open(sc, c.path)
			o := sc.fillgate(time.Minute, "--service", svc, "--then", "submit", "--json").wait()
			o.want(sc, fill.StatusRefused, c.detail, "nothing was asked")
			if o.Submitted != nil || o.Navigated != nil {
				t.Errorf("a refusal says submitted/navigated: %s", sc.safe(o.stdout))
			}
			sc.wantOpened(0)
			if !allEmpty(t, tb.ctx) || login.Requests("/classic/login") != before || login.Carrying(secret) != 0 {
				t.Error("a field was filled, or something was sent to the form's action")
			}
		})
	}

	// answered asks for the focused field with --then submit and answers
	// the prompt with secret.
	answered := func(sc *scene, secret []byte) outcome {
		sc.t.Helper()
		r := sc.fill("--service", svc, "--then", "submit", "--json")
		page := sc.promptPage(r, 1)
		sc.scanProcess(r, secret)
		sc.answer(page, login.URL, secret)
		return r.wait()
	}
	notSubmitted := func(sc *scene, o outcome) {
		sc.t.Helper()
		o.want(sc, fill.StatusFailed, "fillgate cleared the field")
		if o.Submitted == nil || *o.Submitted || o.Navigated == nil || *o.Navigated {
			sc.t.Errorf("result %s; want submitted and navigated false", sc.safe(o.stdout))
		}
	}

	t.Run("a form that names no method is not submitted with GET", func(t *testing.T) {
		sc := e.scene(t)
		secret := sc.secret()
		login.SetRight(secret)
		before := login.Requests("/classic/login")
		tb := open(sc, "/no-method")
		notSubmitted(sc, answered(sc, secret))
		if login.Carrying(secret) != 0 || login.Requests("/classic/login") != before {
			t.Error("the form was submitted")
		}
		if !valueIs(t, tb.ctx, urlClean, secret) {
			t.Error("the page's URL or a field holds the value")
		}
		if !tb.evalBool(`sentEntries() === 0`) {
			t.Error("the submission's entry list was not emptied")
		}
	})

	t.Run("method=dialog is no submit", func(t *testing.T) {
		sc := e.scene(t)
		secret := sc.secret()
		tb := open(sc, "/dialog")
		notSubmitted(sc, answered(sc, secret))
		if !tb.evalBool(`closedWith() === "signin"`) {
			t.Error("the dialog did not close with its button's value")
		}
		if login.Carrying(secret) != 0 || !valueIs(t, tb.ctx, urlClean, secret) {
			t.Error("the value was sent, or the page holds it")
		}
	})

	t.Run("a form that names no method and logs in with fetch", func(t *testing.T) {
		sc := e.scene(t)
		secret := sc.secret()
		login.SetRight(secret)
		tb := sc.openTab(login.URL + "/formdata-login") // it goes on to the welcome page
		tb.eval(`document.getElementById("pw").focus(), true`)
		o := answered(sc, secret)
		// The page logs in and navigates by itself once submitted: on a
		// loaded machine Chromium may drop the in-page call's answer as
		// the navigation replaces the page (ok, navigated, "check the
		// page"), as right as a submit fillgate saw. The service's count
		// says what happened.
		if o.Submitted != nil && !*o.Submitted && o.Navigated != nil && *o.Navigated {
			o.want(sc, fill.StatusOK, "the page went away during the fill")
		} else {
			o.want(sc, fill.StatusOK, "the form was submitted")
		}
		welcomed(t, tb)
		if login.Logins("/api/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
	})
}
