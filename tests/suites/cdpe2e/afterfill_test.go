package cdpe2e

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	hostcdp "github.com/fillgate/fillgate/internal/cdp"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/loginserver"
)

// submit runs Insert with then submit.
func (e *env) submit(b *hostcdp.Browser, in fill.Inspection, secret []byte) fill.Verdict {
	e.t.Helper()
	return e.insertThen(b, in, secret, fill.ThenSubmit)
}

// pageHolds reports whether the page in ctx still holds secret in an
// input, or keeps a value in its field id.
func pageHolds(t testing.TB, ctx context.Context, id string, secret []byte) bool {
	t.Helper()
	return !valueIs(t, ctx, `function (v) { return !fg.holds(v) && fg.left("`+id+`"); }`, secret)
}

// welcomed waits for the welcome page (or text) in the tab.
func welcomed(t testing.TB, tb *tab) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("#welcome"))); err != nil {
		t.Fatalf("the welcome page did not show: %v", err)
	}
}

// submitAndLeaveNothing runs the after-fill flow over the CDP fallback
// against the recording login site in real Chromium: the service gets the
// value exactly once where a login happens, never otherwise, and the page
// holds nothing afterwards.
func submitAndLeaveNothing(t *testing.T, e *env) {
	login, other := loginserver.Start(t, "127.0.0.3"), loginserver.Start(t, "127.0.0.4")
	login.SetOther(other.URL)
	const svc = "127.0.0.3"

	// open opens path, focuses the element focus evaluates to once it
	// shows, connects and inspects.
	open := func(e *env, path, focus, kind string) (*tab, *hostcdp.Browser, fill.Inspection) {
		e.t.Helper()
		tb := e.openTab(login.URL + path)
		// The field once it shows: /react renders its form in a task
		// of its own, which can come after the load event.
		if !tb.becomes(`(` + focus + `) != null`) {
			e.t.Fatalf("%s never showed %s", path, focus)
		}
		tb.eval(`(` + focus + `).focus(), true`)
		b := e.connect(hostcdp.Options{Tab: string(tb.id)})
		in := e.inspect(b, svc, kind)
		wantKind(e.t, in, kind)
		return tb, b, in
	}
	// run runs a case on tabs of its own.
	run := func(name string, f func(t *testing.T, e *env)) {
		t.Run(name, func(t *testing.T) { f(t, e.sub(t)) })
	}
	want := func(t *testing.T, v fill.Verdict, w fill.Verdict) {
		t.Helper()
		if v != w {
			t.Fatalf("verdict %+v; want %+v", v, w)
		}
	}
	pw := `document.getElementById("pw")`

	run("classic POST", func(t *testing.T, e *env) {
		secret := e.secret()
		login.SetRight(secret)
		tb, b, in := open(e, "/classic", pw, fill.FieldPassword)
		if in.Form == nil || in.Form.Action != login.URL || in.Form.Submitter == nil {
			t.Fatalf("inspected form %+v", in.Form)
		}
		want(t, e.submit(b, in, secret), fill.Verdict{Inserted: true, Matched: true, Submitted: true, Navigated: true, Cleared: true})
		welcomed(t, tb)
		if login.Logins("/classic/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
	})

	run("react controlled form, wrong password", func(t *testing.T, e *env) {
		secret := e.secret()
		login.SetRight(e.secret())
		tb, b, in := open(e, "/react", pw, fill.FieldPassword)
		want(t, e.submit(b, in, secret), fill.Verdict{Inserted: true, Matched: true, Submitted: true, Cleared: true})
		if login.Logins("/api/login", secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
		if pageHolds(t, tb.ctx, "pw", secret) || !tb.evalBool(`stateIs("")`) {
			t.Error("the page or the component's state still holds the value")
		}
	})

	run("six boxes that submit themselves", func(t *testing.T, e *env) {
		code := splitSecret(t)
		e.secrets = append(e.secrets, code)
		login.SetRight(code)
		tb, b, in := open(e, "/split-auto", `document.getElementById("b0")`, fill.FieldOTP)
		v := e.submit(b, in, code)
		// The widget logs in and navigates by itself, as soon as its
		// last box is filled: on a loaded machine the page may leave
		// before the call could answer (unconfirmed, navigated), which
		// is as right as a submit it saw. The service's count says what
		// happened.
		if !v.Inserted || !(v.Submitted || v.Unconfirmed && v.Navigated) || v.Stopped != "" || v.Remains {
			t.Fatalf("verdict %+v", v)
		}
		welcomed(t, tb)
		if login.Logins("/api/otp", code) != 1 || login.Carrying(code) != 1 {
			t.Fatalf("the service got the code %d times; want once", login.Carrying(code))
		}
	})

	run("required checkbox left unchecked", func(t *testing.T, e *env) {
		secret := e.secret()
		tb, b, in := open(e, "/required", pw, fill.FieldPassword)
		want(t, e.submit(b, in, secret), fill.Verdict{Inserted: true, Matched: true, Cleared: true, Stopped: "invalid", StoppedBy: "I accept the terms"})
		if login.Carrying(secret) != 0 || pageHolds(t, tb.ctx, "pw", secret) {
			t.Fatal("the value was sent, or it is still in the page")
		}
	})

	run("field in no form", func(t *testing.T, e *env) {
		secret := e.secret()
		login.SetRight(secret)
		tb, b, in := open(e, "/noform", pw, fill.FieldPassword)
		if in.Form != nil {
			t.Fatalf("a field in no form has form %+v", in.Form)
		}
		want(t, e.submit(b, in, secret), fill.Verdict{Inserted: true, Matched: true, Submitted: true, Navigated: true})
		welcomed(t, tb)
		if login.Logins("/api/login", secret) != 1 || login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", login.Carrying(secret))
		}
	})

	run("the frame goes away during the call", func(t *testing.T, e *env) {
		secret := e.secret()
		login.SetRight(secret)
		tb, b, in := open(e, "/frame-host", `document.getElementById("fr").contentDocument.getElementById("pw")`, fill.FieldPassword)
		want(t, e.submit(b, in, secret), fill.Verdict{Inserted: true, Matched: true, Navigated: true, Unconfirmed: true})
		if login.Logins("/api/login", secret) != 1 || !tb.evalBool(`document.getElementById("fr") === null`) {
			t.Fatalf("the service got the value %d times (want once), or the frame is still there", login.Carrying(secret))
		}
	})

	run("the form is reported for the policy", func(t *testing.T, e *env) {
		_, _, in := open(e, "/formaction", pw, fill.FieldPassword)
		if in.Form == nil || in.Form.Action != login.URL || in.Form.Submitter == nil || in.Form.Submitter.Action != other.URL {
			t.Fatalf("inspected form %+v; want the form's action here and the button's there", in.Form)
		}
	})
}
