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
	"github.com/fillgate/fillgate/tests/kit/poll"
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

// wantVerdict checks the verdict's account of the submit. Where the page
// is to navigate, an unconfirmed verdict (the browser dropped the answer
// as the page left; see insertThen) is the product's right answer too,
// and the caller's checks of the page and the service still run.
func wantVerdict(t *testing.T, v verdict, submitted, navigated, cleared bool, stopped string) {
	t.Helper()
	if v.Unconfirmed && navigated {
		return
	}
	if v.Submitted != submitted || v.Navigated != navigated || v.Cleared != cleared || v.Stopped != stopped || v.Remains {
		t.Fatalf("verdict %+v; want submitted %v, navigated %v, cleared %v, stopped %q, nothing remaining", v, submitted, navigated, cleared, stopped)
	}
}

// submitCase is a fill of one login-site page with then submit, the
// verdict it must give and what else must hold after it.
type submitCase struct {
	name, path, focus, kind string
	right                   bool    // the service takes this value (else another)
	want                    verdict // its Submitted, Navigated, Cleared, Stopped and (when set) StoppedBy
	check                   func(t *testing.T, tb *tab, value []byte)
}

// submits runs each case in a subtest of its own, with a fresh value (a
// code for a one-time-code field).
func (s *site) submits(t *testing.T, cases []submitCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			value, right := leakscan.NewSecret(t), leakscan.NewSecret(t)
			if c.kind == "one-time-code" {
				value = otpCode(t)
			}
			if c.right {
				right = value
			}
			s.login.SetRight(right)
			tb, v := s.fill(t, c.path, c.focus, c.kind, "submit", value)
			wantVerdict(t, v, c.want.Submitted, c.want.Navigated, c.want.Cleared, c.want.Stopped)
			if c.want.StoppedBy != "" && v.StoppedBy != c.want.StoppedBy {
				t.Errorf("stopped by %q; want %q", v.StoppedBy, c.want.StoppedBy)
			}
			c.check(t, tb, value)
		})
	}
}

// loggedIn waits for the welcome page and checks that the service got
// value once at endpoint and, when nowhereElse, in no other request.
func (s *site) loggedIn(t *testing.T, tb *tab, endpoint string, value []byte, nowhereElse bool) {
	t.Helper()
	welcome(t, tb)
	if n := s.login.Logins(endpoint, value); n != 1 || nowhereElse && s.login.Carrying(value) != 1 {
		t.Fatalf("the service got the value %d times at %s, %d times in all; want once", n, endpoint, s.login.Carrying(value))
	}
}

// notSent checks that neither origin of the site got value.
func (s *site) notSent(t *testing.T, value []byte) {
	t.Helper()
	if s.login.Carrying(value)+s.other.Carrying(value) != 0 {
		t.Fatal("the service got the value")
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
	// The evaluation fails while the page changes; the deadline bounds it.
	if err := poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		return chromedp.Run(ctx, chromedp.Evaluate[bool](`location.pathname !== "/welcome" && document.readyState === "complete" && document.getElementById("`+id+`") !== null`))
	}); err != nil {
		t.Fatalf("the login page did not come back: %v", err)
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
			s.loggedIn(t, tb, "/classic/login", secret, true)
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
		s.loggedIn(t, tb, "/step2/login", secret, true)
	})

	t.Run("split code that submits itself", func(t *testing.T) {
		code := otpCode(t)
		s.login.SetRight(code)
		tb, v := s.fill(t, "/split-auto", "b0", "one-time-code", "submit", code)
		// Whether the page left within fillgate's wait depends on the
		// machine's load (navigated, or cleared: either is right); so is a
		// page gone before the call could answer (unconfirmed).
		if !(v.Submitted || v.Unconfirmed) || v.Stopped != "" || v.Remains {
			t.Fatalf("verdict %+v; want submitted (by the page), nothing remaining", v)
		}
		s.loggedIn(t, tb, "/api/otp", code, true) // once: fillgate must not submit it again
	})

	s.submits(t, []submitCase{
		{"react controlled form, right password", "/react", "pw", "password", true, verdict{Submitted: true},
			func(t *testing.T, tb *tab, value []byte) {
				s.loggedIn(t, tb, "/api/login", value, true)
				nothingLeft(t, tb, "pw", value)
			}},
		{"react controlled form, wrong password", "/react", "pw", "password", false, verdict{Submitted: true, Cleared: true},
			func(t *testing.T, tb *tab, value []byte) {
				if n := s.login.Logins("/api/login", value); n != 1 {
					t.Fatalf("the service got the value %d times; want once", n)
				}
				nothingLeft(t, tb, "pw", value)
				if !tb.eval(`stateIs("") && document.getElementById("error") !== null`) {
					t.Error("the component's state still holds a value, or the page showed no error")
				}
			}},
		{"one-time code", "/otp", "otp", "one-time-code", true, verdict{Submitted: true, Navigated: true, Cleared: true},
			func(t *testing.T, tb *tab, code []byte) {
				s.loggedIn(t, tb, "/otp/verify", code, false)
				back(t, tb, "otp")
				nothingLeft(t, tb, "otp", code)
			}},
		{"split code with a button", "/split", "b0", "one-time-code", true, verdict{Submitted: true, Navigated: true, Cleared: true},
			func(t *testing.T, tb *tab, code []byte) { s.loggedIn(t, tb, "/otp/verify", code, false) }},
		{"required checkbox left unchecked", "/required", "pw", "password", false,
			verdict{Cleared: true, Stopped: "invalid", StoppedBy: "I accept the terms"}, // the checkbox's label
			func(t *testing.T, tb *tab, value []byte) {
				s.notSent(t, value)
				nothingLeft(t, tb, "pw", value)
			}},
		{"a label holding the value is not reported", "/required-hostile", "pw", "password", false,
			verdict{Cleared: true, Stopped: "invalid", StoppedBy: "tos"}, // the checkbox's name, not its label
			func(t *testing.T, tb *tab, value []byte) {
				if tb.callMain(`function (v) { return document.getElementById("lbl").textContent !== v; }`, string(value)) {
					t.Error("control: the page did not copy the value into the label")
				}
			}},
		{"submit button disabled", "/disabled", "pw", "password", false, verdict{Cleared: true, Stopped: "button_disabled"},
			func(t *testing.T, tb *tab, value []byte) {
				s.notSent(t, value)
				nothingLeft(t, tb, "pw", value)
			}},
		{"two text fields and no submit button", "/no-button", "pw", "password", true, verdict{Cleared: true, Stopped: "no_submit"},
			func(t *testing.T, tb *tab, value []byte) {
				s.notSent(t, value)
				nothingLeft(t, tb, "pw", value)
			}},
		{"field in no form", "/noform", "pw", "password", true, verdict{Submitted: true, Navigated: true},
			func(t *testing.T, tb *tab, value []byte) { s.loggedIn(t, tb, "/api/login", value, true) }},
		{"a login in the button's click handler", "/click-login", "pw", "password", true, verdict{Submitted: true, Navigated: true},
			func(t *testing.T, tb *tab, value []byte) { s.loggedIn(t, tb, "/api/login", value, true) }},
		{"the page points the form elsewhere after the insert", "/form-changes", "pw", "password", false, verdict{Cleared: true, Stopped: "form_changed"},
			func(t *testing.T, tb *tab, value []byte) {
				s.notSent(t, value)
				nothingLeft(t, tb, "pw", value)
			}},
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
