package inpage

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/loginserver"
)

// formInfo is the probe's form (PROTOCOL.md §3).
type formInfo struct {
	Action    string `json:"action"`
	Target    string `json:"target"`
	Elsewhere bool   `json:"elsewhere"`
	Submitter *struct {
		Action string `json:"action"`
		Target string `json:"target"`
	} `json:"submitter"`
}

// site is the login site on two origins and a browser to fill it in.
type site struct {
	t     testing.TB
	bctx  context.Context
	login *loginserver.Server
	other *loginserver.Server
}

func newSite(t testing.TB) *site {
	ctx := testContext(t)
	s := &site{t: t, login: loginserver.Start(t, "127.0.0.1"), other: loginserver.Start(t, "127.0.0.2")}
	s.login.SetOther(s.other.URL)
	s.other.SetOther(s.login.URL)
	_, s.bctx = startBrowser(t, ctx, false)
	return s
}

// fill opens path, focuses the element focus names, probes and inserts
// value with then; it returns the tab and the verdict.
func (s *site) fill(t testing.TB, path, focus, kind, then string, value []byte) (*tab, verdict) {
	t.Helper()
	tb := openTab(t, s.bctx, s.login.URL+path)
	tb.focus(focus)
	p := tb.probe(tb.top(), "tok")
	if p.Field.Kind != kind || p.Field.Problem != "" {
		t.Fatalf("probe field = %+v; want a usable %s field", p.Field, kind)
	}
	v := tb.insertThen(tb.top(), "tok", s.login.URL, kind, then, value)
	out, _ := json.Marshal(v)
	leakscan.Bytes(t, value, "the verdict", out)
	if !v.Inserted || !v.Matched {
		t.Fatalf("verdict %s; want inserted and matched", out)
	}
	tb.worlds = map[cdp.FrameID]runtime.ExecutionContextID{} // a navigation took them
	return tb, v
}

// wantVerdict checks the verdict's account of the submit.
func wantVerdict(t *testing.T, v verdict, submitted, navigated, cleared bool, stopped string) {
	t.Helper()
	if v.Submitted != submitted || v.Navigated != navigated || v.Cleared != cleared || v.Stopped != stopped || v.Remains {
		t.Fatalf("verdict %+v; want submitted %v, navigated %v, cleared %v, stopped %q, nothing remaining", v, submitted, navigated, cleared, stopped)
	}
}

// welcome waits for the welcome page (or the welcome text of a page that
// stayed).
func welcome(t testing.TB, tb *tab) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("#welcome"))); err != nil {
		t.Fatalf("the welcome page did not show: %v", err)
	}
}

// back goes back in the tab's history, as the person would, and waits
// until the login page (restored from the back/forward cache, or loaded
// again) shows its field id.
func back(t *testing.T, tb *tab, id string) {
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

// nothingLeft checks, in the page, that no input holds value and that the
// field with id is empty or gone.
func nothingLeft(t *testing.T, tb *tab, id string, value []byte) {
	t.Helper()
	if !tb.callMain(`function (v, id) { return !fg.holds(v) && fg.left(id); }`, string(value), id) {
		t.Error("the page still holds the value")
	}
}

// TestAfterFill runs the in-page submit and clean-up against the login
// site in real Chromium, as the CDP fallback runs it (the extension runs
// the same function).
func TestAfterFill(t *testing.T) {
	s := newSite(t)

	for _, path := range []string{"/classic", "/classic?nostore"} {
		t.Run("classic POST "+path, func(t *testing.T) {
			secret := leakscan.NewSecret(t)
			s.login.SetRight(secret)
			tb, v := s.fill(t, path, "pw", "password", "submit", secret)
			wantVerdict(t, v, true, true, true, "")
			welcome(t, tb)
			if n := s.login.Logins("/classic/login", secret); n != 1 || s.login.Carrying(secret) != 1 {
				t.Fatalf("the service got the value %d times in logins, %d in all; want once", n, s.login.Carrying(secret))
			}
			// Back: neither the back/forward cache nor form-state restore
			// brings the value back.
			back(t, tb, "pw")
			nothingLeft(t, tb, "pw", secret)
			t.Logf("back navigation: restored from the back/forward cache: %v", tb.eval(`fg.restored()`))
			if restored := tb.eval(`fg.restored()`); restored != (path == "/classic") {
				t.Errorf("restored from the back/forward cache: %v; the case is not the one this subtest is for", restored)
			}
		})
	}

	// A code in a text field comes back both from the back/forward cache
	// and from the saved form state, whichever the loaded machine gives.
	t.Run("control: a submit that leaves the field brings the value back", func(t *testing.T) {
		code := otpCode(t)
		s.login.SetRight(code)
		tb, _ := s.fill(t, "/otp", "otp", "one-time-code", "none", code)
		// Submitted after the evaluation answered (see back).
		tb.eval(`setTimeout(() => document.getElementById("otp").form.requestSubmit(), 0), true`)
		welcome(t, tb)
		back(t, tb, "otp")
		if !tb.holds("document.getElementById('otp')", code) {
			t.Fatal("without fillgate's clear the value did not come back: the back-navigation checks cannot fail")
		}
	})

	t.Run("react controlled form, right password", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		s.login.SetRight(secret)
		tb, v := s.fill(t, "/react", "pw", "password", "submit", secret)
		wantVerdict(t, v, true, false, false, "")
		welcome(t, tb)
		if n := s.login.Logins("/api/login", secret); n != 1 || s.login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", n)
		}
		nothingLeft(t, tb, "pw", secret)
	})

	t.Run("react controlled form, wrong password", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		s.login.SetRight(leakscan.NewSecret(t))
		tb, v := s.fill(t, "/react", "pw", "password", "submit", secret)
		wantVerdict(t, v, true, false, true, "")
		if n := s.login.Logins("/api/login", secret); n != 1 {
			t.Fatalf("the service got the value %d times; want once", n)
		}
		nothingLeft(t, tb, "pw", secret)
		if !tb.eval(`stateIs("") && document.getElementById("error") !== null`) {
			t.Error("the component's state still holds a value, or the page showed no error")
		}
	})

	t.Run("two-step login", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		s.login.SetRight(secret)
		tb := openTab(t, s.bctx, s.login.URL+"/step1")
		// The agent types the username and goes on, as it would.
		tb.eval(`(u => { u.value = "ada"; u.form.requestSubmit(); return true; })(document.getElementById("user"))`)
		if err := chromedp.Do(tb.ctx, chromedp.WaitReady(chromedp.CSS("#pw"))); err != nil {
			t.Fatalf("no password page: %v", err)
		}
		tb.worlds = map[cdp.FrameID]runtime.ExecutionContextID{}
		tb.focus("pw")
		if p := tb.probe(tb.top(), "tok"); p.Field.Kind != "password" {
			t.Fatalf("probe %+v", p)
		}
		v := tb.insertThen(tb.top(), "tok", s.login.URL, "password", "submit", secret)
		wantVerdict(t, v, true, true, true, "")
		welcome(t, tb)
		if n := s.login.Logins("/step2/login", secret); n != 1 || s.login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", n)
		}
	})

	t.Run("one-time code", func(t *testing.T) {
		code := otpCode(t)
		s.login.SetRight(code)
		tb, v := s.fill(t, "/otp", "otp", "one-time-code", "submit", code)
		wantVerdict(t, v, true, true, true, "")
		welcome(t, tb)
		if n := s.login.Logins("/otp/verify", code); n != 1 {
			t.Fatalf("the service got the code %d times; want once", n)
		}
		back(t, tb, "otp")
		nothingLeft(t, tb, "otp", code)
	})

	t.Run("split code with a button", func(t *testing.T) {
		code := otpCode(t)
		s.login.SetRight(code)
		tb, v := s.fill(t, "/split", "b0", "one-time-code", "submit", code)
		wantVerdict(t, v, true, true, true, "")
		welcome(t, tb)
		if n := s.login.Logins("/otp/verify", code); n != 1 {
			t.Fatalf("the service got the code %d times; want once", n)
		}
	})

	t.Run("split code that submits itself", func(t *testing.T) {
		code := otpCode(t)
		s.login.SetRight(code)
		tb, v := s.fill(t, "/split-auto", "b0", "one-time-code", "submit", code)
		if !v.Submitted || v.Stopped != "" || v.Remains {
			t.Fatalf("verdict %+v; want submitted (by the page), nothing remaining", v)
		}
		welcome(t, tb)
		if n := s.login.Logins("/api/otp", code); n != 1 || s.login.Carrying(code) != 1 {
			t.Fatalf("the service got the code %d times; want once (fillgate must not submit it again)", s.login.Carrying(code))
		}
	})

	t.Run("required checkbox left unchecked", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		tb, v := s.fill(t, "/required", "pw", "password", "submit", secret)
		wantVerdict(t, v, false, false, true, "invalid")
		if v.StoppedBy != "I accept the terms" {
			t.Errorf("stopped by %q; want the checkbox's label", v.StoppedBy)
		}
		if s.login.Carrying(secret) != 0 {
			t.Fatal("the service got the value although validation stopped the submit")
		}
		nothingLeft(t, tb, "pw", secret)
	})

	t.Run("a label holding the value is not reported", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		tb, v := s.fill(t, "/required-hostile", "pw", "password", "submit", secret)
		wantVerdict(t, v, false, false, true, "invalid")
		if v.StoppedBy != "tos" {
			t.Errorf("stopped by %q; want the checkbox's name", v.StoppedBy)
		}
		if tb.callMain(`function (v) { return document.getElementById("lbl").textContent !== v; }`, string(secret)) {
			t.Error("control: the page did not copy the value into the label")
		}
	})

	t.Run("submit button disabled", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		tb, v := s.fill(t, "/disabled", "pw", "password", "submit", secret)
		wantVerdict(t, v, false, false, true, "button_disabled")
		if s.login.Carrying(secret) != 0 {
			t.Fatal("the service got the value")
		}
		nothingLeft(t, tb, "pw", secret)
	})

	t.Run("field in no form", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		s.login.SetRight(secret)
		tb, v := s.fill(t, "/noform", "pw", "password", "submit", secret)
		wantVerdict(t, v, true, true, false, "")
		welcome(t, tb)
		if n := s.login.Logins("/api/login", secret); n != 1 || s.login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times; want once", n)
		}
	})

	t.Run("a login in the button's click handler", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		s.login.SetRight(secret)
		tb, v := s.fill(t, "/click-login", "pw", "password", "submit", secret)
		wantVerdict(t, v, true, true, false, "")
		welcome(t, tb)
		if n := s.login.Logins("/api/login", secret); n != 1 || s.login.Carrying(secret) != 1 {
			t.Fatalf("the service got the value %d times in all; want once, by the page's own login", s.login.Carrying(secret))
		}
	})

	t.Run("the page points the form elsewhere after the insert", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		tb, v := s.fill(t, "/form-changes", "pw", "password", "submit", secret)
		wantVerdict(t, v, false, false, true, "form_changed")
		if s.login.Carrying(secret)+s.other.Carrying(secret) != 0 {
			t.Fatal("the value was sent")
		}
		nothingLeft(t, tb, "pw", secret)
	})

	t.Run("then none", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		tb, v := s.fill(t, "/classic", "pw", "password", "none", secret)
		if !v.Remains || v.Submitted || v.Cleared {
			t.Fatalf("verdict %+v; want the value left in the field", v)
		}
		if !tb.holds("document.getElementById('pw')", secret) || s.login.Carrying(secret) != 0 {
			t.Fatal("the value is not in the field, or the form was submitted")
		}
	})

	t.Run("form destinations", func(t *testing.T) {
		tabs := shareTab(t, s.bctx)
		for _, c := range []struct {
			path string
			want formInfo
		}{
			{"/classic", formInfo{Action: s.login.URL}},
			{"/other-origin", formInfo{Action: s.other.URL}},
			{"/formaction", formInfo{Action: s.login.URL}},
			{"/form-attr", formInfo{Action: s.other.URL, Elsewhere: true}},
			{"/target-frame", formInfo{Action: s.login.URL, Target: "side"}},
		} {
			tb := tabs.visit(t, s.login.URL+c.path)
			tb.focus("pw")
			var got formInfo
			if err := json.Unmarshal(tb.probe(tb.top(), "tok").Form, &got); err != nil {
				t.Fatalf("%s: form: %v", c.path, err)
			}
			if got.Action != c.want.Action || got.Target != c.want.Target || got.Elsewhere != c.want.Elsewhere || (got.Submitter == nil) != c.want.Elsewhere {
				t.Errorf("%s: form %+v; want %+v, with a submitter unless the form is the empty one elsewhere", c.path, got, c.want)
				continue
			}
			if got.Submitter == nil {
				continue
			}
			wantSub := c.want.Action
			if c.path == "/formaction" {
				wantSub = s.other.URL
			}
			if got.Submitter.Action != wantSub || got.Submitter.Target != c.want.Target {
				t.Errorf("%s: submitter %+v; want action %s, target %q", c.path, *got.Submitter, wantSub, c.want.Target)
			}
		}
		tb := tabs.visit(t, s.login.URL+"/noform")
		tb.focus("pw")
		if f := tb.probe(tb.top(), "tok").Form; strings.TrimSpace(string(f)) != "null" {
			t.Errorf("a field in no form has form %s", f)
		}
	})

	t.Run("the form changed between probe and insert", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		tb := openTab(t, s.bctx, s.login.URL+"/classic")
		tb.focus("pw")
		tb.probe(tb.top(), "tok")
		tb.eval(`document.getElementById("login").action = "` + s.other.URL + `/classic/login", true`)
		v := tb.insertThen(tb.top(), "tok", s.login.URL, "password", "submit", secret)
		if v.Inserted || v.Reason != "form_changed" {
			t.Fatalf("verdict %+v; want not inserted, form_changed", v)
		}
		if !tb.eval(`document.getElementById("pw").value === ""`) {
			t.Error("the field was filled")
		}
	})
}
