//go:build linux

package e2e

import (
	"github.com/fillgate/fillgate/tests/kit/median"

	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/loginserver"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

// BenchmarkExtensionRoundTrip measures what fillgate adds to one fill
// through the extension, the human excluded: from the start of `fillgate
// fill` until the browser shows the prompt page (process start, agent
// socket, inspect, policy, prompt server, popup window), plus from the
// human's Enter until `fillgate fill` exits with the result (the form
// POST, the re-check and insert in the page, the result). It reports the
// medians of both parts and of their sum.
func BenchmarkExtensionRoundTrip(b *testing.B) {
	ctx := testContext(b, 10*time.Minute)
	roundTrip(b, startChromium(b, ctx))
}

// BenchmarkFirefoxRoundTrip is BenchmarkExtensionRoundTrip in Firefox ESR.
func BenchmarkFirefoxRoundTrip(b *testing.B) {
	ctx := testContext(b, 10*time.Minute)
	roundTrip(b, startFirefox(b, ctx, browser.FirefoxOptions{}))
}

// roundTrip is the round-trip benchmark in br.
func roundTrip(b *testing.B, br testBrowser) {
	s := br.session()
	tb := br.open(b, s.origin1+"/password")
	secret := s.secret(b)
	var toPrompt, toResult, total []time.Duration
	for b.Loop() {
		tb.eval(`(f => { f.value = ""; f.focus(); return document.activeElement === f; })(document.getElementById("pw"))`)
		a, n := s.request(b, "--service", "127.0.0.1", "--then", "none")
		p := br.awaitPrompt(b, n)
		p.typeSecret(secret)
		submitted := time.Now()
		p.enter()
		res, code := a.result(b, s.ctx)
		if res.Status != fill.StatusOK || code != 0 {
			b.Fatalf("result %+v, exit code %d", res, code)
		}
		open := s.prompts.Window(p.windowID()).At.Sub(a.Started)
		done := a.Ended.Sub(submitted)
		toPrompt, toResult, total = append(toPrompt, open), append(toResult, done), append(total, open+done)
	}
	b.StopTimer()
	if !tb.holds(pwHolds, secret) {
		b.Errorf("value differed")
	}
	b.ReportMetric(median.Ms(total), "ms-median-roundtrip")
	b.ReportMetric(median.Ms(toPrompt), "ms-median-to-prompt")
	b.ReportMetric(median.Ms(toResult), "ms-median-submit-to-result")
	finish(b, br)
}

// BenchmarkApprovalNone measures a fill with no human (approval = "none",
// a value remembered in a real gnome-keyring) on the extension path, from
// the agent's request on the agent socket until its result. The browser is
// driven (the benchmark's debugging port), and a saved value never goes
// into a driven browser's page: the figure is the whole login in
// fillgate's clean room (its browser started, the page opened again there,
// the insert and submit, the session handed to the tab and the tab
// navigated to where the login ended), on the recording login site. Next
// to it, in the same run, a bare CDP Input.insertText of the same value
// into the same field on an open session; it reports both medians and
// their ratio (the target of 3 was set for an insert into the page, which
// a driven browser no longer gets).
func BenchmarkApprovalNone(b *testing.B) {
	ctx := testContext(b, 10*time.Minute)
	r := newRig(b)
	secretservice.Start(b)
	r.env = append(r.env, "DBUS_SESSION_BUS_ADDRESS="+os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	ch := startChromiumIn(b, ctx, r, "profile")
	login := loginserver.Start(b, loginSvc)
	u, _ := url.Parse(login.URL)
	ch.policy(b, fmt.Sprintf("[service.%q]\napproval = \"none\"\n", loginSvc+":"+u.Port()))
	secret := ch.secret(b)
	login.SetRight(secret)
	if out, _, code := ch.cliIn(b, ctx, secret, "remember", "--service", loginSvc, "--stdin"); code != 0 {
		b.Fatalf("fillgate remember: %s", out)
	}
	tb := ch.openTab(b, login.URL+"/signin")
	reset := func() {
		tb.navigate(login.URL + "/signin")
		if !tb.eval(`(f => { f.focus(); return document.activeElement === f; })(document.getElementById("pw"))`) {
			b.Fatal("focus the field")
		}
	}
	var fills, bare []time.Duration
	for b.Loop() {
		reset()
		start := time.Now()
		res, err := agentsock.Fill(ctx, r.runDir, fill.Request{Service: loginSvc}, "benchmark", nil)
		fills = append(fills, time.Since(start))
		if err != nil || res.Status != fill.StatusOK || res.HandedOver == nil || !*res.HandedOver {
			b.Fatalf("fill: %v %+v", err, res)
		}
		reset()
		start = time.Now()
		if _, err := chromedp.Call(tb.ctx, input.InsertText, input.InsertTextParams{Text: string(secret)}); err != nil {
			b.Fatal(err)
		}
		bare = append(bare, time.Since(start))
	}
	b.StopTimer()
	if !tb.holds(pwHolds, secret) {
		b.Errorf("value differed")
	}
	if n := login.Logins("/classic/login", secret); n != len(fills) {
		b.Errorf("the login site got %d logins with the value; want one per fill, %d", n, len(fills))
	}
	b.ReportMetric(median.Ms(fills), "ms-median-none-cleanroom-login")
	b.ReportMetric(median.Ms(bare), "ms-median-bare-insertText")
	b.ReportMetric(median.Ms(fills)/median.Ms(bare), "ratio")
	finish(b, ch)
}
