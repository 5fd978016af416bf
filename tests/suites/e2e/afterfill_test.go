//go:build linux

package e2e

import (
	"testing"

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

// waitWelcome waits for the login site's welcome page (or text) in tb.
func waitWelcome(tb page) { tb.waitFor(`document.getElementById("welcome") !== null`) }

// leftNothing checks, in the page, that no input holds the secret and the
// field id is empty or gone.
func leftNothing(t testing.TB, tb page, id string, secret []byte) {
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

// afterFill is one scenario on the recording login site.
type afterFill struct {
	name string
	run  func(t *testing.T, f *filler)
}

// filler fills the recording login site in one browser.
type filler struct {
	b            testBrowser
	login, other *loginserver.Server
}

// loginSvc is the service of the recording login site (loginSite); the
// prompt is on 127.0.0.1.
const loginSvc = "127.0.0.3"

// right makes value the login site's right password or code, and
// returns it.
func (f *filler) right(value []byte) []byte {
	f.login.SetRight(value)
	return value
}

// loggedInOnce checks that the login site received value exactly once,
// in one login at endpoint.
func (f *filler) loggedInOnce(t *testing.T, endpoint string, value []byte) {
	t.Helper()
	if f.login.Logins(endpoint, value) != 1 || f.login.Carrying(value) != 1 {
		t.Fatalf("the service got the value %d times; want once", f.login.Carrying(value))
	}
}

// fillPage opens path on the login site, focuses focus, asks with args
// and answers the prompt with secret; it checks the request and that the
// prompt closed.
func (f *filler) fillPage(t *testing.T, path, focus string, secret []byte, args ...string) (page, fill.Result, int) {
	t.Helper()
	tb := f.b.open(t, f.login.URL+path)
	tb.focus(focus)
	res, code := f.answer(t, tb, secret, args...)
	return tb, res, code
}

// answer asks with args for the field focused in tb and answers the
// prompt with secret; it checks the request and that the prompt closed.
func (f *filler) answer(t *testing.T, tb page, secret []byte, args ...string) (fill.Result, int) {
	t.Helper()
	s := f.b.session()
	a, p := ask(t, f.b, append([]string{"--service", loginSvc}, args...)...)
	p.send(secret)
	res, code := s.outcome(t, secret, a)
	s.closed(t, p)
	return res, code
}

// runAfterFill fills the recording login site in b through the real
// extension and host, as the agent would with `fillgate fill`, and checks
// that the service received the value exactly once where a login happens
// (never otherwise), that the page holds nothing afterwards (back
// navigation included), and that no output, log or file holds it.
func runAfterFill(t *testing.T, b testBrowser) {
	login, other := loginSite(t)
	f := &filler{b: b, login: login, other: other}
	for _, c := range afterFills {
		t.Run(c.name, func(t *testing.T) { c.run(t, f) })
	}
}

// afterFills run in each browser (TestChromium and TestFirefox's "after
// fill").
var afterFills = []afterFill{
	{"classic POST", func(t *testing.T, f *filler) {
		secret := f.right(f.b.session().secret(t))
		tb, res, code := f.fillPage(t, "/classic", pw, secret)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "the form was submitted and the page navigated away")
		wantSubmit(t, res, true, true)
		waitWelcome(tb)
		f.loggedInOnce(t, "/classic/login", secret)
		tb.goBack("pw")
		leftNothing(t, tb, "pw", secret)
	}},

	{"react controlled form, right password", func(t *testing.T, f *filler) {
		secret := f.right(f.b.session().secret(t))
		tb, res, code := f.fillPage(t, "/react", pw, secret)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "the page removed or emptied the field")
		wantSubmit(t, res, true, false)
		waitWelcome(tb)
		f.loggedInOnce(t, "/api/login", secret)
		leftNothing(t, tb, "pw", secret)
	}},

	{"react controlled form, wrong password", func(t *testing.T, f *filler) {
		s := f.b.session()
		secret := s.secret(t)
		f.login.SetRight(s.secret(t))
		tb, res, code := f.fillPage(t, "/react", pw, secret)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "fillgate cleared it")
		wantSubmit(t, res, true, false)
		if f.login.Logins("/api/login", secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", f.login.Carrying(secret))
		}
		leftNothing(t, tb, "pw", secret)
		if !tb.eval(`stateIs("") && document.getElementById("error") !== null`) {
			t.Error("the component's state still holds a value, or the page showed no error")
		}
	}},

	{"two-step login", func(t *testing.T, f *filler) {
		secret := f.right(f.b.session().secret(t))
		tb := f.b.open(t, f.login.URL+"/step1")
		tb.eval(`(u => { u.value = "ada"; u.form.requestSubmit(); return true; })(document.getElementById("user"))`)
		tb.waitFor(`location.pathname === "/step2" && document.readyState === "complete" && document.getElementById("pw") !== null`)
		tb.focus(pw)
		res, code := f.answer(t, tb, secret)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "navigated away")
		waitWelcome(tb)
		f.loggedInOnce(t, "/step2/login", secret)
		tb.goBack("pw")
		leftNothing(t, tb, "pw", secret)
	}},

	{"one-time code", func(t *testing.T, f *filler) {
		code := f.right(f.b.session().codeSecret(t, 6))
		tb, res, exit := f.fillPage(t, "/otp", `document.getElementById("otp")`, code, "--field", "otp")
		wantResult(t, res, exit, fill.StatusOK, loginSvc, fill.FieldOTP, "navigated away")
		waitWelcome(tb)
		f.loggedInOnce(t, "/otp/verify", code)
		tb.goBack("otp")
		leftNothing(t, tb, "otp", code)
	}},

	splitCode("six boxes with a button", "/split", "/otp/verify"),
	splitCode("six boxes that submit themselves", "/split-auto", "/api/otp"),

	{"required checkbox left unchecked", func(t *testing.T, f *filler) {
		secret := f.b.session().secret(t)
		tb, res, code := f.fillPage(t, "/required", pw, secret)
		wantResult(t, res, code, fill.StatusFailed, loginSvc, fill.FieldPassword, `validation stopped the submit at the field "I accept the terms"`)
		wantSubmit(t, res, false, false)
		if f.login.Carrying(secret) != 0 {
			t.Fatal("the service got the value although the submit was stopped")
		}
		leftNothing(t, tb, "pw", secret)
	}},

	// No implicit submission (two text fields) and nothing else to press:
	// the result must not say the form was submitted.
	{"two text fields and no submit button", func(t *testing.T, f *filler) {
		secret := f.right(f.b.session().secret(t))
		tb, res, code := f.fillPage(t, "/no-button", pw, secret)
		wantResult(t, res, code, fill.StatusFailed, loginSvc, fill.FieldPassword, "the form cannot be submitted with Enter alone (it has several text fields, or the field is in no form), and within 1 s of Enter the page showed no sign of a submit")
		wantSubmit(t, res, false, false)
		if f.login.Carrying(secret) != 0 {
			t.Fatal("the service got the value, though the form has no way to be submitted")
		}
		leftNothing(t, tb, "pw", secret)
	}},

	{"field in no form", func(t *testing.T, f *filler) {
		secret := f.right(f.b.session().secret(t))
		tb, res, code := f.fillPage(t, "/noform", pw, secret)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "navigated away")
		waitWelcome(tb)
		f.loggedInOnce(t, "/api/login", secret)
	}},

	{"then none", func(t *testing.T, f *filler) {
		secret := f.b.session().secret(t)
		tb, res, code := f.fillPage(t, "/classic", pw, secret, "--then", "none")
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "nothing was submitted (then none): the page, and any tool that reads it")
		wantSubmit(t, res, false, false)
		if !tb.holds(pwHolds, secret) || f.login.Carrying(secret) != 0 {
			t.Fatal("the value is not in the field, or it was sent")
		}
		forget(tb, pw)
	}},

	// In Chromium the call in a removed frame ends without an answer
	// (reported as unconfirmed); Firefox fires pagehide in the frame
	// before it goes and delivers the in-page function's answer: the
	// submit is confirmed.
	{"the frame goes away during the call", func(t *testing.T, f *filler) {
		secret := f.right(f.b.session().secret(t))
		tb, res, code := f.fillPage(t, "/frame-host", `document.getElementById("fr").contentDocument.getElementById("pw")`, secret)
		if _, ok := f.b.(*firefox); ok {
			wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "the form was submitted and the page navigated away")
			wantSubmit(t, res, true, true)
		} else {
			wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "the page went away during the fill")
			wantSubmit(t, res, false, true)
		}
		if f.login.Logins("/api/login", secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", f.login.Carrying(secret))
		}
		if !tb.eval(`document.getElementById("fr") === null`) {
			t.Error("control: the frame is still there")
		}
	}},

	// Refused before anything is asked: the form would send the value
	// elsewhere.
	postsElsewhere("form posts to another origin", "/other-origin", func(f *filler) string { return "sends it to " + f.other.URL }),
	postsElsewhere("formaction to another origin", "/formaction", func(*filler) string { return "The submit button of the form" }),
	postsElsewhere("form= attribute", "/form-attr", func(*filler) string { return "belongs to a form elsewhere" }),
	postsElsewhere("target into a frame", "/target-frame", func(*filler) string { return `into another frame or window (target "side")` }),
}

// splitCode is a scenario in which a code goes into the six boxes of the
// page at path, which submit it to endpoint.
func splitCode(name, path, endpoint string) afterFill {
	return afterFill{name, func(t *testing.T, f *filler) {
		code := f.right(f.b.session().codeSecret(t, 6))
		tb, res, exit := f.fillPage(t, path, `document.getElementById("b0")`, code, "--field", "otp")
		wantResult(t, res, exit, fill.StatusOK, loginSvc, fill.FieldOTP, "submitted")
		waitWelcome(tb)
		f.loggedInOnce(t, endpoint, code)
	}}
}

// postsElsewhere is a scenario in which the form of the page at path
// would send the value elsewhere: refused before anything is asked, for
// the detail detail gives, and nothing is posted.
func postsElsewhere(name, path string, detail func(*filler) string) afterFill {
	return afterFill{name, func(t *testing.T, f *filler) {
		posts := f.other.Requests("/classic/login") + f.login.Requests("/classic/login")
		res := refusedAtOnce(t, f.b, f.login.URL+path, pw, loginSvc, detail(f))
		if res.Submitted != nil || res.Navigated != nil {
			t.Errorf("a refusal says submitted/navigated: %+v", res)
		}
		if f.other.Requests("/classic/login")+f.login.Requests("/classic/login") != posts {
			t.Error("something was posted")
		}
	}}
}
