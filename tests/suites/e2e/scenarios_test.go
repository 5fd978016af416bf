//go:build linux

package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
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
	// sentWith: the form's last submit sent the value.
	sentWith = `function (v) { return fg.sent(v); }`
	// onlyTrustedOnPW: the page saw trusted input events on the field pw and
	// nothing else: no untrusted input, no other field, no submit.
	onlyTrustedOnPW = `fg.trustedInput("pw") && !fg.untrustedInput() && fg.onlyInputOn(["pw"]) && !fg.submitted()`
	untouched       = `fg.quiet() && fg.allEmpty()`
)

// TestChromium runs every scenario against one headless Chromium, one
// after another, each in a new tab.
func TestChromium(t *testing.T) {
	ctx := testContext(t, 4*time.Minute)
	ch := startChromium(t, ctx)
	const svc = "127.0.0.1"

	// Filled with --then none: the human answers, the value lands in the
	// focused field with a trusted input event, and nothing is submitted.
	// (The submit and what it leaves are TestChromiumAfterFill's.)
	t.Run("password", func(t *testing.T) {
		secret := ch.secret(t)
		tb := ch.open(t, ch.origin1+"/password")
		tb.focus(`document.getElementById("pw")`)
		a, n := ch.request(t, "--service", svc, "--then", "none")
		p := ch.awaitPrompt(t, n)
		p.says("Password for 127.0.0.1", ch.origin1, "the focused password field",
			fmt.Sprintf("(pid %d) via fillgate fill", os.Getpid()))
		p.screenshots(t)
		p.send(secret)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "nothing was submitted")
		if res.Origin != ch.origin1 {
			t.Errorf("result origin %s; want %s", res.Origin, ch.origin1)
		}
		if !tb.holds(pwHolds, secret) {
			t.Errorf("value differed")
		}
		if !tb.eval(onlyTrustedOnPW) || !tb.eval(`document.getElementById("user").value === ""`) {
			t.Errorf("the page did not see exactly a trusted input on the password field and no submit")
		}
		ch.closed(t, p)
	})

	t.Run("one-time code", func(t *testing.T) {
		secret := ch.secret(t)
		tb := ch.open(t, ch.origin1+"/otp")
		tb.focus(`document.getElementById("otp")`)
		a, n := ch.request(t, "--service", svc, "--field", "otp", "--then", "none")
		p := ch.awaitPrompt(t, n)
		p.says("One-time code for 127.0.0.1")
		p.send(secret)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldOTP, "one-time-code field")
		if !tb.holds(`function (v) { return fg.is(document.getElementById("otp"), v); }`, secret) {
			t.Errorf("value differed")
		}
		if !tb.eval(`fg.trustedInput("otp") && !fg.untrustedInput() && fg.onlyInputOn(["otp"])`) {
			t.Errorf("the page did not see a trusted input on the code field alone")
		}
		ch.closed(t, p)
	})

	t.Run("split code", func(t *testing.T) {
		secret := ch.codeSecret(t, 6)
		tb := ch.open(t, ch.origin1+"/split")
		tb.focus(`document.getElementById("b0")`)
		a, n := ch.request(t, "--service", svc, "--field", "otp", "--then", "none")
		p := ch.awaitPrompt(t, n)
		p.send(secret)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldOTP)
		if !tb.holds(`function (v) { return codeIs(v); }`, secret) {
			t.Errorf("the boxes do not hold the code, one character each")
		}
		if !tb.eval(`eachBoxTrusted() && !fg.untrustedInput()`) {
			t.Errorf("not every box saw a trusted input event")
		}
		ch.closed(t, p)
	})

	t.Run("controlled input", func(t *testing.T) {
		secret := ch.secret(t)
		tb := ch.open(t, ch.origin1+"/react")
		tb.focus(`document.getElementById("pw")`)
		a, n := ch.request(t, "--service", svc, "--then", "none")
		p := ch.awaitPrompt(t, n)
		p.send(secret)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if !tb.holds(`function (v) { return stateIs(v) && fg.is(document.getElementById("pw"), v); }`, secret) {
			t.Errorf("the component's state or the field differed from the value")
		}
		if !tb.eval(`fg.trustedInput("pw")`) {
			t.Errorf("no trusted input event")
		}
		ch.closed(t, p)
	})

	t.Run("shadow root", func(t *testing.T) {
		secret := ch.secret(t)
		tb := ch.open(t, ch.origin1+"/shadow")
		tb.focus(`field()`)
		a, n := ch.request(t, "--service", svc, "--then", "none")
		p := ch.awaitPrompt(t, n)
		p.send(secret)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if !tb.holds(`function (v) { return fg.is(field(), v); }`, secret) {
			t.Errorf("value differed")
		}
		if !tb.eval(`fg.trustedInput("pw") && !fg.untrustedInput()`) {
			t.Errorf("no trusted input event from inside the shadow root")
		}
		ch.closed(t, p)
	})

	t.Run("same-origin iframe", func(t *testing.T) {
		secret := ch.secret(t)
		tb := ch.open(t, ch.origin1+"/iframe")
		const frame = `document.getElementById("fr").contentWindow`
		tb.focus(frame + `.document.getElementById("pw")`)
		a, n := ch.request(t, "--service", svc, "--then", "none")
		p := ch.awaitPrompt(t, n)
		p.send(secret)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if !tb.holds(`function (v) { const w = `+frame+`; return w.fg.is(w.document.getElementById("pw"), v); }`, secret) {
			t.Errorf("value differed")
		}
		if !tb.eval(`(w => w.fg.trustedInput("pw") && w.fg.onlyInputOn(["pw"]))(` + frame + `) && fg.quiet()`) {
			t.Errorf("the frame did not see exactly a trusted input on its password field")
		}
		ch.closed(t, p)
	})

	// The human says no, or nobody answers.
	t.Run("cancel", func(t *testing.T) {
		secret := ch.secret(t)
		tb := ch.open(t, ch.origin1+"/password")
		tb.focus(`document.getElementById("pw")`)
		a, n := ch.request(t, "--service", svc)
		p := ch.awaitPrompt(t, n)
		p.typeSecret(secret) // typed, then thought better of it
		p.clickCancel()
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusCancelled, svc, fill.FieldPassword, "cancelled")
		ch.untouched(t, tb)
		ch.closed(t, p)
	})

	t.Run("prompt window closed", func(t *testing.T) {
		secret := ch.secret(t)
		tb := ch.open(t, ch.origin1+"/password")
		tb.focus(`document.getElementById("pw")`)
		a, n := ch.request(t, "--service", svc)
		p := ch.awaitPrompt(t, n)
		p.typeSecret(secret)
		if _, err := chromedp.CallBrowser(ch.bctx, target.CloseTarget, target.CloseTargetParams{TargetID: p.id}); err != nil {
			t.Fatalf("close the prompt window: %v", err)
		}
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusCancelled, svc, fill.FieldPassword, "closed without an answer")
		ch.untouched(t, tb)
	})

	t.Run("no response", func(t *testing.T) {
		secret := ch.secret(t)
		tb := ch.open(t, ch.origin1+"/password")
		tb.focus(`document.getElementById("pw")`)
		a, n := ch.request(t, "--service", svc, "--timeout", "6s")
		p := ch.awaitPrompt(t, n)
		p.typeSecret(secret) // typed, but never sent
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusNoResponse, svc, fill.FieldPassword, "within 6s")
		if res.Fallback == "" {
			t.Errorf("no_response without a fallback hint: %+v", res)
		}
		ch.untouched(t, tb)
		ch.closed(t, p)
	})

	// Refused before anything is asked: the focused field is not one to
	// fill. No prompt opens.
	t.Run("username field", func(t *testing.T) {
		ch.refusedAtOnce(t, ch.origin1+"/password", `document.getElementById("user")`, svc, "is not a password field")
	})
	for _, c := range []struct{ name, path, detail string }{
		{"hidden field", "/hidden", "is hidden"},
		{"1x1 field", "/tiny", "is too small to see"},
		{"transparent field", "/transparent", "is transparent"},
		{"covered field", "/covered", "is covered by another element"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch.refusedAtOnce(t, ch.origin1+c.path, `document.getElementById("pw")`, svc, c.detail)
		})
	}
	t.Run("look-alike host", func(t *testing.T) {
		// http://github.com.localhost:port is loopback, so plain http and
		// the port are allowed there: only the host check can refuse it.
		res := ch.refusedAtOnce(t, ch.lookalike+"/password", `document.getElementById("pw")`, "github.com",
			ch.lookalike+", which is not github.com or a subdomain of it")
		if res.Origin != ch.lookalike || strings.Contains(res.Detail, "https") {
			t.Errorf("result %+v; want the look-alike origin refused for its host alone", res)
		}
	})
	t.Run("cross-site iframe", func(t *testing.T) {
		secret := ch.secret(t)
		tb := ch.open(t, ch.origin2+"/frame-other")
		fr := ch.frame(t, ch.origin1+"/password")
		click(t, tb.ctx, 120, 95) // into the password field inside the frame
		if !fr.eval(`document.activeElement === document.getElementById("pw")`) {
			t.Fatal("the click did not focus the framed password field")
		}
		a, n := ch.request(t, "--service", svc)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "inside a page from "+ch.origin2)
		ch.noPrompt(t, n)
		if !fr.eval(untouched) || !tb.eval(`fg.quiet()`) {
			t.Errorf("the frame or the page saw input")
		}
	})

	// Refused at the re-check: the page changed while the prompt was open.
	t.Run("focus moved", func(t *testing.T) {
		secret := ch.secret(t)
		tb := ch.open(t, ch.origin1+"/password")
		tb.focus(`document.getElementById("pw")`)
		a, n := ch.request(t, "--service", svc)
		p := ch.awaitPrompt(t, n)
		tb.focus(`document.getElementById("user")`)
		p.send(secret)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "focus moved to another field")
		ch.untouched(t, tb)
		ch.closed(t, p)
	})

	t.Run("navigated away", func(t *testing.T) {
		secret := ch.secret(t)
		tb := ch.open(t, ch.origin1+"/password")
		tb.focus(`document.getElementById("pw")`)
		a, n := ch.request(t, "--service", svc)
		p := ch.awaitPrompt(t, n)
		// The tab goes to another site whose password field has focus.
		if err := chromedp.Do(tb.ctx, chromedp.Navigate(ch.origin2+"/password")); err != nil {
			t.Fatalf("navigate: %v", err)
		}
		tb.focus(`document.getElementById("pw")`)
		p.send(secret)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "navigated to another origin")
		if !tb.eval(`location.origin === "` + ch.origin2 + `"`) {
			t.Errorf("the tab is not on the other site")
		}
		ch.untouched(t, tb)
		ch.closed(t, p)
	})

	// The user paused fills in the extension's popup.
	t.Run("paused", func(t *testing.T) {
		secret := ch.secret(t)
		ch.setPaused(t, true)
		defer ch.setPaused(t, false)
		tb := ch.open(t, ch.origin1+"/password")
		tb.focus(`document.getElementById("pw")`)
		a, n := ch.request(t, "--service", svc)
		res, code := a.result(t, ctx)
		ch.check(t, secret, a, res)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "paused")
		ch.noPrompt(t, n)
		ch.untouched(t, tb)
	})

	ch.finish(t)
}

// request runs `fillgate fill --json` with args as the agent. It returns
// the run and how many prompts had opened before it, for awaitPrompt and
// noPrompt.
func (ch *chromium) request(t testing.TB, args ...string) (*agent, int) {
	t.Helper()
	n := ch.prompts.count()
	return ch.fill(t, ch.ctx, args...), n
}

// refusedAtOnce opens url, focuses the element focus evaluates to, asks
// for a password for service, and expects a refusal whose detail holds
// detail, with no prompt and nothing typed into the page. It returns the
// result.
func (ch *chromium) refusedAtOnce(t *testing.T, url, focus, service, detail string) fill.Result {
	t.Helper()
	secret := ch.secret(t)
	tb := ch.open(t, url)
	tb.focus(focus)
	a, n := ch.request(t, "--service", service)
	res, code := a.result(t, ch.ctx)
	ch.check(t, secret, a, res)
	wantResult(t, res, code, fill.StatusRefused, service, fill.FieldPassword, detail)
	ch.noPrompt(t, n)
	ch.untouched(t, tb)
	return res
}

// check runs the checks every scenario shares: the agent side holds no
// trace of the secret, the host is the one that started with the browser,
// and the audit log's newest entry is this request's outcome.
func (ch *chromium) check(t *testing.T, secret []byte, a *agent, res fill.Result) {
	t.Helper()
	st := ch.hostStatus(t, ch.ctx)
	if st.PID != ch.host.PID {
		t.Errorf("the host restarted: pid %d, was %d", st.PID, ch.host.PID)
	}
	ch.scanAgentSide(t, secret, a, st.PID, ch.browser.Cmd.Process.Pid)
	if e := ch.lastAudit(t); e.Status != res.Status || e.Service != res.Service || e.Origin != res.Origin || e.Detail != res.Detail {
		t.Errorf("the audit log's last entry %+v does not match the result %+v", e, res)
	}
}

// closed checks that the prompt window is gone once the request ended.
func (ch *chromium) closed(t *testing.T, p *prompt) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ch.ctx, 10*time.Second)
	defer cancel()
	if err := ch.prompts.waitClosed(ctx, p.id); err != nil {
		t.Error(err)
	}
}

// noPrompt checks that no prompt opened since there were n, neither in
// the target events so far nor among the browser's open targets.
func (ch *chromium) noPrompt(t *testing.T, n int) {
	t.Helper()
	infos, err := chromedp.Targets(ch.bctx)
	if err != nil {
		t.Fatalf("targets: %v", err)
	}
	for _, info := range infos {
		if info.Type == "page" && ch.prompts.isPrompt(info.URL) {
			t.Errorf("a prompt is open: %s", info.URL)
		}
	}
	if got := ch.prompts.count(); got != n {
		t.Errorf("%d prompt(s) opened; want none", got-n)
	}
}

// untouched checks that the page saw no input, change or submit event and
// that all its inputs are empty.
func (ch *chromium) untouched(t *testing.T, tb tab) {
	t.Helper()
	if !tb.eval(untouched) {
		t.Errorf("the page saw input or holds a value")
	}
}

// codeSecret is a random one-time code of n letters and digits, the
// secret of one scenario.
func (ch *chromium) codeSecret(t *testing.T, n int) []byte {
	t.Helper()
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	s := make([]byte, n)
	for i := range s {
		s[i] = alphabet[randIndex(t, len(alphabet))]
	}
	ch.secrets = append(ch.secrets, s)
	return s
}

// randIndex is a uniformly random index below n.
func randIndex(t *testing.T, n int) int {
	t.Helper()
	var b [1]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			t.Fatal(err)
		}
		if int(b[0]) < 256/n*n {
			return int(b[0]) % n
		}
	}
}

// setPaused flips the pause switch in the extension's toolbar popup, as
// the user would, and waits until the host has heard of it.
func (ch *chromium) setPaused(t *testing.T, paused bool) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(ch.bctx)
	defer cancel() // closes the popup page
	if err := chromedp.Do(ctx, chromedp.Navigate(manifest.ExtensionOrigin+"popup.html")); err != nil {
		t.Fatalf("open the extension's popup: %v", err)
	}
	pop := tab{t: t, ctx: ctx}
	want := "false"
	if paused {
		want = "true"
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("conn").className === "ok"`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the popup does not show the host connected: %v", err)
	}
	if !pop.eval(`(s => { if (s.checked !== ` + want + `) s.click(); return true; })(document.getElementById("pause"))`) {
		t.Fatal("flip the pause switch")
	}
	deadline, stop := context.WithTimeout(ch.ctx, 10*time.Second)
	defer stop()
	for ch.hostStatus(t, deadline).Extension.Paused != paused {
		select {
		case <-deadline.Done():
			t.Fatalf("the host never heard that fills are paused=%v", paused)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
