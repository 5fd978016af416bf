//go:build linux

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// testContext bounds a whole browser test on a slow, shared machine.
func testContext(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Page checks, run in the page's own world. Only booleans come back.
const (
	pwHolds = `function (v) { return fg.is(document.getElementById("pw"), v); }`
	// onlyTrustedOnPW: the page saw trusted input events on the field pw and
	// nothing else: no untrusted input, no other field, no submit.
	onlyTrustedOnPW = `fg.trustedInput("pw") && !fg.untrustedInput() && fg.onlyInputOn(["pw"]) && !fg.submitted()`
	untouchedExpr   = `fg.quiet() && fg.allEmpty()`
	// pw is the login page's password field.
	pw = `document.getElementById("pw")`
)

// TestChromium runs every scenario against one headless Chromium, one
// after another, each in a new tab, then the after-fill scenarios, then
// the clean room's, then the Chromium-only ones. The scenarios and the
// after-fill ones fill the page itself, with the person's consent to
// in-page fills (testPolicy); the clean room's are the default for a
// browser a program drives. It runs beside TestFirefox (each has a rig of
// its own), so one browser's waits overlap the other's.
func TestChromium(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 10*time.Minute)
	ch := startChromium(t, ctx)
	runScenarios(t, ch)
	t.Run("after fill", func(t *testing.T) { runAfterFill(t, ch) })
	t.Run("clean room", func(t *testing.T) { runCleanRoom(t, ch) })
	t.Run("chromium only: form method", func(t *testing.T) { formMethod(t, ch) })
	finish(t, ch)
}

// TestFirefox runs every scenario of TestChromium in Firefox ESR, against
// one headless Firefox, one after another, each in a new tab: `fillgate
// install --browser firefox` writes the host manifest, the unpacked
// extension is installed as a temporary add-on over WebDriver BiDi,
// Firefox starts the host, and the human answers the prompt popup the
// extension opens. Firefox driven over BiDi is a browser a program
// drives, and fillgate's clean room cannot log in for it: the scenarios
// and the after-fill ones run with the person's consent to in-page fills
// (testPolicy), and the clean room's check that without it every fill of
// Firefox is refused before anything is asked. Last come the Firefox-only
// ones: what the host says of a browser driven over BiDi, a second request
// while the prompt is open, and the host and the extension going away. It
// runs beside TestChromium.
func TestFirefox(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 10*time.Minute)
	// System access: the BiDi session may script the add-on's pages.
	fx := startFirefox(t, ctx, browser.FirefoxOptions{AllowSystemAccess: true})
	runScenarios(t, fx)
	t.Run("after fill", func(t *testing.T) { runAfterFill(t, fx) })
	t.Run("clean room", func(t *testing.T) { runCleanRoom(t, fx) })
	for _, c := range firefoxOnly {
		t.Run(c.name, func(t *testing.T) { c.run(t, fx) })
	}
	finish(t, fx)
}

// runScenarios runs each scenario in b, one after another.
func runScenarios(t *testing.T, b testBrowser) {
	for _, c := range scenarios {
		t.Run(c.name, func(t *testing.T) { c.run(t, b) })
	}
}

// scenario is one request of the agent, and what the person does, in
// one browser.
type scenario struct {
	name string
	run  func(t *testing.T, b testBrowser)
}

// svc is the service the scenarios ask for: the login pages' first origin.
const svc = "127.0.0.1"

// scenarios run in each browser (TestChromium, TestFirefox).
var scenarios = []scenario{
	// Filled with --then none: the human answers, the value lands in the
	// focused field with a trusted input event, and nothing is submitted.
	// (The submit and what it leaves are the after-fill scenarios'.) The
	// browser is driven and the policy says driven = "in-page", so the
	// prompt tells the person that the program driving it can read what
	// they type as it goes into the page.
	{"password", func(t *testing.T, b testBrowser) {
		s := b.session()
		secret := s.secret(t)
		tb := loginFocused(t, b)
		a, p := ask(t, b, "--service", svc, "--then", "none")
		p.says("Password for 127.0.0.1", s.origin1, "the focused password field",
			fmt.Sprintf("(pid %d) via fillgate fill", os.Getpid()),
			`your policy lets fillgate type into it (driven = "in-page"): that program can read this password in the page as it goes in`)
		p.looksRight(t)
		p.send(secret)
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "nothing was submitted")
		if res.Origin != s.origin1 {
			t.Errorf("result origin %s; want %s", res.Origin, s.origin1)
		}
		if !tb.holds(pwHolds, secret) {
			t.Errorf("value differed")
		}
		if !tb.eval(onlyTrustedOnPW) || !tb.eval(`document.getElementById("user").value === ""`) {
			t.Errorf("the page did not see exactly a trusted input on the password field and no submit")
		}
		s.closed(t, p)
	}},

	{"one-time code", func(t *testing.T, b testBrowser) {
		s := b.session()
		secret := s.secret(t)
		s.leftInTextField()
		tb := b.open(t, s.origin1+"/otp")
		tb.focus(`document.getElementById("otp")`)
		a, p := ask(t, b, "--service", svc, "--field", "otp", "--then", "none")
		p.says("One-time code for 127.0.0.1")
		p.send(secret)
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldOTP, "one-time-code field")
		if !tb.holds(`function (v) { return fg.is(document.getElementById("otp"), v); }`, secret) {
			t.Errorf("value differed")
		}
		if !tb.eval(`fg.trustedInput("otp") && !fg.untrustedInput() && fg.onlyInputOn(["otp"])`) {
			t.Errorf("the page did not see a trusted input on the code field alone")
		}
		s.closed(t, p)
	}},

	{"split code", func(t *testing.T, b testBrowser) {
		s := b.session()
		secret := s.codeSecret(t, 6)
		s.leftInTextField()
		tb, p, a := filledWith(t, b, "/split", `document.getElementById("b0")`, secret, "--field", "otp")
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldOTP)
		if !tb.holds(`function (v) { return codeIs(v); }`, secret) {
			t.Errorf("the boxes do not hold the code, one character each")
		}
		if !tb.eval(`eachBoxTrusted() && !fg.untrustedInput()`) {
			t.Errorf("not every box saw a trusted input event")
		}
		s.closed(t, p)
	}},

	{"controlled input", func(t *testing.T, b testBrowser) {
		s := b.session()
		secret := s.secret(t)
		tb, p, a := filledWith(t, b, "/react", pw, secret)
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if !tb.holds(`function (v) { return stateIs(v) && fg.is(document.getElementById("pw"), v); }`, secret) {
			t.Errorf("the component's state or the field differed from the value")
		}
		if !tb.eval(`fg.trustedInput("pw")`) {
			t.Errorf("no trusted input event")
		}
		s.closed(t, p)
	}},

	{"shadow root", func(t *testing.T, b testBrowser) {
		s := b.session()
		secret := s.secret(t)
		tb, p, a := filledWith(t, b, "/shadow", `field()`, secret)
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if !tb.holds(`function (v) { return fg.is(field(), v); }`, secret) {
			t.Errorf("value differed")
		}
		if !tb.eval(`fg.trustedInput("pw") && !fg.untrustedInput()`) {
			t.Errorf("no trusted input event from inside the shadow root")
		}
		s.closed(t, p)
	}},

	{"same-origin iframe", sameOriginFrame},

	// The human says no, or nobody answers.
	{"cancel", func(t *testing.T, b testBrowser) {
		s := b.session()
		secret := s.secret(t)
		tb := loginFocused(t, b)
		a, p := ask(t, b, "--service", svc)
		p.typeSecret(secret) // typed, then thought better of it
		p.clickCancel()
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusCancelled, svc, fill.FieldPassword, "cancelled")
		untouched(t, tb)
		s.closed(t, p)
	}},

	{"prompt window closed", func(t *testing.T, b testBrowser) {
		s := b.session()
		secret := s.secret(t)
		tb := loginFocused(t, b)
		a, p := ask(t, b, "--service", svc)
		p.typeSecret(secret)
		b.closeWindow(t, p.windowID())
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusCancelled, svc, fill.FieldPassword, "closed without an answer")
		untouched(t, tb)
	}},

	{"no response", func(t *testing.T, b testBrowser) {
		s := b.session()
		secret := s.secret(t)
		tb := loginFocused(t, b)
		// The person types but never sends. The time must cover opening
		// the prompt and typing on a loaded machine: with 6 s a loaded
		// run found the prompt already closed when it typed.
		a, p := ask(t, b, "--service", svc, "--timeout", "10s")
		p.typeSecret(secret) // typed, but never sent
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusNoResponse, svc, fill.FieldPassword, "within 10s")
		if res.Fallback == "" {
			t.Errorf("no_response without a fallback hint: %+v", res)
		}
		untouched(t, tb)
		s.closed(t, p)
	}},

	// Refused before anything is asked: the focused field is not one to
	// fill. No prompt opens.
	{"username field", func(t *testing.T, b testBrowser) {
		refusedAtOnce(t, b, b.session().origin1+"/password", `document.getElementById("user")`, svc, "is not a password field")
	}},
	refusedField("hidden field", "/hidden", "is hidden"),
	refusedField("1x1 field", "/tiny", "is too small to see"),
	refusedField("transparent field", "/transparent", "is transparent"),
	refusedField("covered field", "/covered", "is covered by another element"),
	{"look-alike host", func(t *testing.T, b testBrowser) {
		// http://github.com.localhost:port is loopback, so plain http and
		// the port are allowed there: only the host check can refuse it.
		s := b.session()
		res := refusedAtOnce(t, b, s.lookalike+"/password", pw, "github.com",
			s.lookalike+", which is not github.com or a subdomain of it")
		if res.Origin != s.lookalike || strings.Contains(res.Detail, "https") {
			t.Errorf("result %+v; want the look-alike origin refused for its host alone", res)
		}
	}},
	{"cross-site iframe", crossSiteFrame},

	// Refused at the re-check: the page changed while the prompt was open.
	{"focus moved", func(t *testing.T, b testBrowser) {
		s := b.session()
		secret := s.secret(t)
		tb := loginFocused(t, b)
		a, p := ask(t, b, "--service", svc)
		tb.focus(`document.getElementById("user")`)
		p.send(secret)
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "focus moved to another field")
		untouched(t, tb)
		s.closed(t, p)
	}},

	{"navigated away", func(t *testing.T, b testBrowser) {
		s := b.session()
		secret := s.secret(t)
		tb := loginFocused(t, b)
		a, p := ask(t, b, "--service", svc)
		// The tab goes to another site whose password field has focus.
		tb.navigate(s.origin2 + "/password")
		tb.focus(pw)
		p.send(secret)
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "navigated to another origin")
		if !tb.eval(`location.origin === "` + s.origin2 + `"`) {
			t.Errorf("the tab is not on the other site")
		}
		untouched(t, tb)
		s.closed(t, p)
	}},

	// The user paused fills in the extension's popup.
	{"paused", func(t *testing.T, b testBrowser) {
		s := b.session()
		secret := s.secret(t)
		b.setPaused(t, true)
		defer b.setPaused(t, false)
		tb := loginFocused(t, b)
		a, n := s.request(t, "--service", svc)
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "paused")
		noPrompt(t, b, n)
		untouched(t, tb)
	}},

	// An agent on another machine uses the person's browser through an
	// `ssh -R` forward of the agent socket, on loopback: Debian's sshd
	// (started by the test in inetd mode on a connection the test
	// accepts, with its own host and user keys) plays the agent's machine;
	// `fillgate fill --socket` there fills the page here, and the prompt
	// names the agent as coming through ssh.
	{"remote agent over ssh", func(t *testing.T, b testBrowser) {
		s := b.session()
		remote := startSSHForward(t, s.ctx, s.rig)
		secret := s.secret(t)
		tb := loginFocused(t, b)
		n := s.prompts.Count()
		a := remote.fill(t, s.ctx, "--service", svc, "--then", "none")
		p := b.awaitPrompt(t, n)
		p.says("an agent on another machine, through ssh (pid", "via fillgate fill")
		p.send(secret)
		res, code := s.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if res.Origin != s.origin1 || !tb.holds(pwHolds, secret) || !tb.eval(`fg.trustedInput("pw")`) {
			t.Errorf("result %+v; want the value typed into %s", res, s.origin1)
		}
		if e := s.lastAudit(t); e.Agent.Remote != "ssh" || e.Agent.Name != "ssh" {
			t.Errorf("the audit log's last entry names the agent %+v; want one through ssh", e.Agent)
		}
		forgetInFirefox(b, tb, pw)
		s.closed(t, p)
		// The far end sees the same browsers through the forward.
		out, errOut, code := remote.cli(t, s.ctx, "status", "--socket", remote.socket)
		if code != 0 || !strings.Contains(string(out), s.origin1+", password field focused") {
			t.Errorf("fillgate status --socket over ssh exited %d: %s%s", code, out, errOut)
		}
		leakscan.Dirs(t, secret, remote.root)
	}},
}

// filledWith opens path on the first origin, focuses the field focus
// evaluates to, asks for svc with --then none and args, and answers the
// prompt with secret. It returns the page, the prompt and the request.
func filledWith(t *testing.T, b testBrowser, path, focus string, secret []byte, args ...string) (page, prompt, *agent) {
	t.Helper()
	s := b.session()
	tb := b.open(t, s.origin1+path)
	tb.focus(focus)
	a, p := ask(t, b, append([]string{"--service", svc, "--then", "none"}, args...)...)
	p.send(secret)
	return tb, p, a
}

// refusedField is a scenario in which the focused password field of the
// page at path is refused before anything is asked, for detail.
func refusedField(name, path, detail string) scenario {
	return scenario{name, func(t *testing.T, b testBrowser) {
		refusedAtOnce(t, b, b.session().origin1+path, pw, svc, detail)
	}}
}

// forget empties the field expr evaluates to once the scenario has
// checked it: the finish scan is the profile's, which may keep what a
// field held.
func forget(tb page, expr string) {
	tb.eval(expr + `.value = "", true`)
}

// forgetInFirefox is forget in Firefox, as TestFirefox has always done
// after these scenarios; Chromium's field keeps the value until the
// finish scan.
func forgetInFirefox(b testBrowser, tb page, expr string) {
	if _, ok := b.(*firefox); ok {
		forget(tb, expr)
	}
}

// sameOriginFrame fills the password field in a same-origin frame.
func sameOriginFrame(t *testing.T, b testBrowser) {
	s := b.session()
	secret := s.secret(t)
	const frame = `document.getElementById("fr").contentWindow`
	tb, p, a := filledWith(t, b, "/iframe", frame+`.document.getElementById("pw")`, secret)
	res, code := s.outcome(t, secret, a)
	wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
	if !tb.holds(`function (v) { const w = `+frame+`; return w.fg.is(w.document.getElementById("pw"), v); }`, secret) {
		t.Errorf("value differed")
	}
	if !tb.eval(`(w => w.fg.trustedInput("pw") && w.fg.onlyInputOn(["pw"]))(` + frame + `) && fg.quiet()`) {
		t.Errorf("the frame did not see exactly a trusted input on its password field")
	}
	forgetInFirefox(b, tb, frame+`.document.getElementById("pw")`)
	s.closed(t, p)
}

// crossSiteFrame focuses, with a click, the password field of a page
// framed by another site, and expects a refusal naming the framing site.
func crossSiteFrame(t *testing.T, b testBrowser) {
	s := b.session()
	secret := s.secret(t)
	tb := b.open(t, s.origin2+"/frame-other")
	if fx, ok := b.(*firefox); ok {
		// With Fission the frame runs in a process of its own, else in the
		// page's.
		fx.wantIsolation(t)
	}
	fr := tb.frame(s.origin1 + "/password")
	// The person clicks into the password field inside the frame (the
	// frame sits at the page's top left, so the point is the same in
	// both).
	fr.click(120, 95)
	if !fr.eval(`document.activeElement === document.getElementById("pw")`) {
		t.Fatal("the click did not focus the framed password field")
	}
	a, n := s.request(t, "--service", svc)
	res, code := s.outcome(t, secret, a)
	wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "inside a page from "+s.origin2)
	noPrompt(t, b, n)
	if !fr.eval(untouchedExpr) || !tb.eval(`fg.quiet()`) {
		t.Errorf("the frame or the page saw input")
	}
}
