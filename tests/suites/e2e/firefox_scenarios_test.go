//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// TestFirefox runs every scenario of TestChromium in Firefox ESR, against
// one headless Firefox, one after another, each in a new tab: `fillgate
// install --browser firefox` writes the host manifest, the unpacked
// extension is installed as a temporary add-on over WebDriver BiDi,
// Firefox starts the host, and the human answers the prompt popup the
// extension opens. Then come TestChromiumAfterFill's scenarios, and last
// the host and the extension going away.
func TestFirefox(t *testing.T) {
	ctx := testContext(t, 4*time.Minute)
	// System access: the BiDi session may open the add-on's popup page.
	fx := startFirefox(t, ctx, browser.FirefoxOptions{AllowSystemAccess: true})
	const svc = "127.0.0.1"
	pw := `document.getElementById("pw")`

	// Filled with --then none: the human answers, the value lands in the
	// focused field with a trusted input event, and nothing is submitted.
	// (The submit and what it leaves are TestFirefoxAfterFill's.)
	t.Run("password", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/password")
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc, "--then", "none")
		p := fx.awaitPrompt(t, n)
		p.says("Password for 127.0.0.1", fx.origin1, "the focused password field",
			fmt.Sprintf("(pid %d) via fillgate fill", os.Getpid()))
		p.fitsPopup()
		p.send(secret)
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "nothing was submitted")
		if res.Origin != fx.origin1 {
			t.Errorf("result origin %s; want %s", res.Origin, fx.origin1)
		}
		if !tb.holds(pwHolds, secret) {
			t.Errorf("value differed")
		}
		if !tb.eval(onlyTrustedOnPW) || !tb.eval(`document.getElementById("user").value === ""`) {
			t.Errorf("the page did not see exactly a trusted input on the password field and no submit")
		}
		fx.closed(t, p)
	})

	t.Run("one-time code", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/otp")
		tb.focus(`document.getElementById("otp")`)
		a, n := fx.request(t, "--service", svc, "--field", "otp", "--then", "none")
		p := fx.awaitPrompt(t, n)
		p.says("One-time code for 127.0.0.1")
		p.send(secret)
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldOTP, "one-time-code field")
		if !tb.holds(`function (v) { return fg.is(document.getElementById("otp"), v); }`, secret) {
			t.Errorf("value differed")
		}
		if !tb.eval(`fg.trustedInput("otp") && !fg.untrustedInput() && fg.onlyInputOn(["otp"])`) {
			t.Errorf("the page did not see a trusted input on the code field alone")
		}
		fx.closed(t, p)
	})

	t.Run("split code", func(t *testing.T) {
		secret := fx.codeSecret(t, 6)
		tb := fx.open(t, fx.origin1+"/split")
		tb.focus(`document.getElementById("b0")`)
		a, n := fx.request(t, "--service", svc, "--field", "otp", "--then", "none")
		p := fx.awaitPrompt(t, n)
		p.send(secret)
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldOTP)
		if !tb.holds(`function (v) { return codeIs(v); }`, secret) {
			t.Errorf("the boxes do not hold the code, one character each")
		}
		if !tb.eval(`eachBoxTrusted() && !fg.untrustedInput()`) {
			t.Errorf("not every box saw a trusted input event")
		}
		fx.closed(t, p)
	})

	t.Run("controlled input", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/react")
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc, "--then", "none")
		p := fx.awaitPrompt(t, n)
		p.send(secret)
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if !tb.holds(`function (v) { return stateIs(v) && fg.is(document.getElementById("pw"), v); }`, secret) {
			t.Errorf("the component's state or the field differed from the value")
		}
		if !tb.eval(`fg.trustedInput("pw")`) {
			t.Errorf("no trusted input event")
		}
		fx.closed(t, p)
	})

	t.Run("shadow root", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/shadow")
		tb.focus(`field()`)
		a, n := fx.request(t, "--service", svc, "--then", "none")
		p := fx.awaitPrompt(t, n)
		p.send(secret)
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if !tb.holds(`function (v) { return fg.is(field(), v); }`, secret) {
			t.Errorf("value differed")
		}
		if !tb.eval(`fg.trustedInput("pw") && !fg.untrustedInput()`) {
			t.Errorf("no trusted input event from inside the shadow root")
		}
		fx.closed(t, p)
	})

	t.Run("same-origin iframe", func(t *testing.T) {
		fx.sameOriginFrame(t)
	})

	// The human says no, or nobody answers.
	t.Run("cancel", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/password")
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc)
		p := fx.awaitPrompt(t, n)
		p.typeSecret(secret) // typed, then thought better of it
		p.clickCancel()
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusCancelled, svc, fill.FieldPassword, "cancelled")
		tb.untouched()
		fx.closed(t, p)
	})

	t.Run("prompt window closed", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/password")
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc)
		p := fx.awaitPrompt(t, n)
		p.typeSecret(secret)
		if err := fx.ff.Call(ctx, "browsingContext.close", map[string]any{"context": p.id}, nil); err != nil {
			t.Fatalf("close the prompt window: %v", err)
		}
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusCancelled, svc, fill.FieldPassword, "closed without an answer")
		tb.untouched()
	})

	t.Run("no response", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/password")
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc, "--timeout", "6s")
		p := fx.awaitPrompt(t, n)
		p.typeSecret(secret) // typed, but never sent
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusNoResponse, svc, fill.FieldPassword, "within 6s")
		if res.Fallback == "" {
			t.Errorf("no_response without a fallback hint: %+v", res)
		}
		tb.untouched()
		fx.closed(t, p)
	})

	// While the prompt is open (the window on top: Firefox's
	// getLastFocused returns it whatever windowTypes says), the active tab
	// is still the login page's: `fillgate status` names it, never the
	// prompt, and a request for another service is refused for the login
	// page, without a second prompt.
	t.Run("second request while the prompt is open", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/password")
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc, "--then", "none")
		p := fx.awaitPrompt(t, n)
		promptOrigin := fx.prompts.origin(p.id)
		out, errOut, code := fx.cli(t, ctx, "status", "--json")
		var listed []agentsock.HostStatus
		if code != 0 || json.Unmarshal(out, &listed) != nil || len(listed) != 1 {
			t.Fatalf("fillgate status --json exited %d: %s%s", code, out, errOut)
		}
		if at := listed[0].ActiveTab; at == nil || at.Origin != fx.origin1 || at.Field != fill.FieldPassword ||
			strings.Contains(string(out), promptOrigin) {
			t.Errorf("with the prompt open, status lists the active tab %+v; want %s with a password field, never the prompt", at, fx.origin1)
		}
		b, m := fx.request(t, "--service", "127.0.0.2")
		res, code := b.result(t, ctx)
		wantResult(t, res, code, fill.StatusRefused, "127.0.0.2", fill.FieldPassword, "The focused field is on "+fx.origin1+",")
		if strings.Contains(res.Detail, promptOrigin) || fx.prompts.count() != m {
			t.Errorf("the second request saw the prompt: %+v", res)
		}
		fx.scan(t, secret, b, fx.host.PID)
		fx.audited(t, res)

		p.send(secret)
		res, code = a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if !tb.holds(pwHolds, secret) {
			t.Errorf("value differed")
		}
		tb.eval(`document.getElementById("pw").value = "", true`) // the finish scan is the profile's
		fx.closed(t, p)
	})

	// Refused before anything is asked: the focused field is not one to
	// fill. No prompt opens.
	t.Run("username field", func(t *testing.T) {
		fx.refusedAtOnce(t, fx.origin1+"/password", `document.getElementById("user")`, svc, "is not a password field")
	})
	for _, c := range []struct{ name, path, detail string }{
		{"hidden field", "/hidden", "is hidden"},
		{"1x1 field", "/tiny", "is too small to see"},
		{"transparent field", "/transparent", "is transparent"},
		{"covered field", "/covered", "is covered by another element"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx.refusedAtOnce(t, fx.origin1+c.path, pw, svc, c.detail)
		})
	}
	t.Run("look-alike host", func(t *testing.T) {
		// http://github.com.localhost:port is loopback, so plain http and
		// the port are allowed there: only the host check can refuse it.
		res := fx.refusedAtOnce(t, fx.lookalike+"/password", pw, "github.com",
			fx.lookalike+", which is not github.com or a subdomain of it")
		if res.Origin != fx.lookalike || strings.Contains(res.Detail, "https") {
			t.Errorf("result %+v; want the look-alike origin refused for its host alone", res)
		}
	})
	t.Run("cross-site iframe", func(t *testing.T) {
		fx.crossSiteFrame(t, true)
	})

	// Refused at the re-check: the page changed while the prompt was open.
	t.Run("focus moved", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/password")
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc)
		p := fx.awaitPrompt(t, n)
		tb.focus(`document.getElementById("user")`)
		p.send(secret)
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "focus moved to another field")
		tb.untouched()
		fx.closed(t, p)
	})

	t.Run("navigated away", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/password")
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc)
		p := fx.awaitPrompt(t, n)
		// The tab goes to another site whose password field has focus.
		tb.navigate(fx.origin2 + "/password")
		tb.focus(pw)
		p.send(secret)
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "navigated to another origin")
		if !tb.eval(`location.origin === "` + fx.origin2 + `"`) {
			t.Errorf("the tab is not on the other site")
		}
		tb.untouched()
		fx.closed(t, p)
	})

	// The user paused fills in the extension's popup.
	t.Run("paused", func(t *testing.T) {
		secret := fx.secret(t)
		fx.setPaused(t, true)
		defer fx.setPaused(t, false)
		tb := fx.open(t, fx.origin1+"/password")
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc)
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "paused")
		fx.noPrompt(t, n)
		tb.untouched()
	})

	// An agent on another machine, through an `ssh -R` forward of the
	// agent socket (TestRemoteAgentOverSSH).
	t.Run("remote agent over ssh", func(t *testing.T) {
		remote := startSSHForward(t, ctx, fx.rig)
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/password")
		tb.focus(pw)
		n := fx.prompts.count()
		a := remote.fill(t, ctx, "--service", svc, "--then", "none")
		p := fx.awaitPrompt(t, n)
		p.says("an agent on another machine, through ssh (pid", "via fillgate fill")
		p.send(secret)
		res, code := a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if res.Origin != fx.origin1 || !tb.holds(pwHolds, secret) || !tb.eval(`fg.trustedInput("pw")`) {
			t.Errorf("result %+v; want the value typed into %s", res, fx.origin1)
		}
		if e := fx.lastAudit(t); e.Agent.Remote != "ssh" || e.Agent.Name != "ssh" {
			t.Errorf("the audit log's last entry names the agent %+v; want one through ssh", e.Agent)
		}
		tb.eval(`document.getElementById("pw").value = "", true`) // the finish scan is the profile's
		fx.closed(t, p)
		out, errOut, code := remote.cli(t, ctx, "status", "--socket", remote.socket)
		if code != 0 || !strings.Contains(string(out), fx.origin1+", password field focused") {
			t.Errorf("fillgate status --socket over ssh exited %d: %s%s", code, out, errOut)
		}
		leakscan.Dirs(t, secret, remote.root)
	})

	// Submit as a person would and leave nothing: TestChromiumAfterFill's
	// scenarios, in this browser.
	t.Run("after fill", fx.afterFill)

	// Failed: the host dies while the prompt is open. The agent gets an
	// answer (never a hang), the prompt closes, nothing is typed, and the
	// extension starts a new host that serves the next request.
	t.Run("host killed", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/password")
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc)
		p := fx.awaitPrompt(t, n)
		p.typeSecret(secret)
		old := fx.host.PID
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		res, code := a.result(t, ctx)
		if res.Status != fill.StatusFailed || code != fill.StatusFailed.ExitCode() || !strings.Contains(res.Detail, "host") {
			t.Errorf("with its host killed the agent got %+v (exit %d); want failed, naming the host", res, code)
		}
		fx.closed(t, p)
		tb.untouched()
		waitGone(t, ctx, old, "the killed host")
		fx.host = fx.nextHost(t, old)
		fx.scan(t, secret, a, 0) // the killed host recorded nothing

		secret = fx.secret(t)
		a, n = fx.request(t, "--service", svc, "--then", "none")
		p = fx.awaitPrompt(t, n)
		p.send(secret)
		res, code = a.result(t, ctx)
		fx.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if !tb.holds(pwHolds, secret) {
			t.Errorf("value differed")
		}
		tb.eval(`document.getElementById("pw").value = "", true`) // the finish scan is the profile's
		fx.closed(t, p)
	})

	// Failed: the person removes the extension while the prompt is open.
	// Firefox closes the native port, the host ends the request as failed
	// and exits; nothing is typed. Nothing is left to close the prompt
	// window (it is the browser's now), but its page is dead: its port
	// answers nothing. This comes last: the add-on stays gone.
	t.Run("extension removed", func(t *testing.T) {
		secret := fx.secret(t)
		tb := fx.open(t, fx.origin1+"/password")
		tb.focus(pw)
		a, n := fx.request(t, "--service", svc)
		p := fx.awaitPrompt(t, n)
		p.typeSecret(secret)
		if err := fx.ff.Call(ctx, "webExtension.uninstall", map[string]any{"extension": manifest.FirefoxID}, nil); err != nil {
			t.Fatalf("remove the add-on: %v", err)
		}
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusFailed, svc, fill.FieldPassword, "browser")
		waitGone(t, ctx, fx.host.PID, "the host of the removed add-on")
		fx.scan(t, secret, a, 0)
		fx.audited(t, res)
		tb.untouched()
		addr := strings.TrimPrefix(fx.prompts.origin(p.id), "http://")
		if c, err := net.DialTimeout("tcp", addr, 10*time.Second); err == nil {
			c.Close()
			t.Errorf("the prompt's port %s still answers after its host exited", addr)
		}
		if err := fx.ff.Call(ctx, "browsingContext.close", map[string]any{"context": p.id}, nil); err != nil {
			t.Errorf("close the dead prompt window: %v", err)
		}
	})

	fx.finish(t)
}

// sameOriginFrame fills the password field in a same-origin frame.
func (fx *firefox) sameOriginFrame(t *testing.T) {
	secret := fx.secret(t)
	tb := fx.open(t, fx.origin1+"/iframe")
	const frame = `document.getElementById("fr").contentWindow`
	tb.focus(frame + `.document.getElementById("pw")`)
	a, n := fx.request(t, "--service", "127.0.0.1", "--then", "none")
	p := fx.awaitPrompt(t, n)
	p.send(secret)
	res, code := a.result(t, fx.ctx)
	fx.check(t, secret, a, res)
	wantResult(t, res, code, fill.StatusOK, "127.0.0.1", fill.FieldPassword)
	if !tb.holds(`function (v) { const w = `+frame+`; return w.fg.is(w.document.getElementById("pw"), v); }`, secret) {
		t.Errorf("value differed")
	}
	if !tb.eval(`(w => w.fg.trustedInput("pw") && w.fg.onlyInputOn(["pw"]))(` + frame + `) && fg.quiet()`) {
		t.Errorf("the frame did not see exactly a trusted input on its password field")
	}
	tb.eval(frame + `.document.getElementById("pw").value = "", true`) // the finish scan is the profile's
	fx.closed(t, p)
}

// crossSiteFrame focuses, with a click, the password field of a page
// framed by another site, and expects a refusal naming the framing site.
// With fission the frame runs in a process of its own, else in the
// page's.
func (fx *firefox) crossSiteFrame(t *testing.T, fission bool) {
	secret := fx.secret(t)
	tb := fx.open(t, fx.origin2+"/frame-other")
	if n := fx.isolatedProcesses(); fission != (n >= 2) || !fission && n != 0 {
		t.Fatalf("%d isolated web content processes; want Fission %v", n, fission)
	}
	fr := tb.frame(fx.origin1 + "/password")
	// The person clicks into the password field inside the frame (the
	// frame sits at the page's top left, so the point is the same in
	// both). In Firefox 153, BiDi input actions on the top-level context
	// never reach an out-of-process frame: the click goes to the frame's
	// own context, as the browser routes a real one.
	fr.click(120, 95)
	if !fr.eval(`document.activeElement === document.getElementById("pw")`) {
		t.Fatal("the click did not focus the framed password field")
	}
	a, n := fx.request(t, "--service", "127.0.0.1")
	res, code := a.result(t, fx.ctx)
	fx.check(t, secret, a, res)
	wantResult(t, res, code, fill.StatusRefused, "127.0.0.1", fill.FieldPassword, "inside a page from "+fx.origin2)
	fx.noPrompt(t, n)
	if !fr.eval(untouched) || !tb.eval(`fg.quiet()`) {
		t.Errorf("the frame or the page saw input")
	}
}

// TestFirefoxWithoutFission runs the frame scenarios in a Firefox ESR with
// Fission (site isolation) turned off, as some managed installs have it:
// a cross-site frame then runs in the page's own process, and the
// extension must still tell the frames apart.
func TestFirefoxWithoutFission(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	fx := startFirefox(t, ctx, browser.FirefoxOptions{Prefs: `user_pref("fission.autostart", false);` + "\n"})
	t.Run("same-origin iframe", fx.sameOriginFrame)
	t.Run("cross-site iframe", func(t *testing.T) { fx.crossSiteFrame(t, false) })
	fx.finish(t)
}
