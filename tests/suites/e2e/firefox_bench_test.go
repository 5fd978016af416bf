//go:build linux

package e2e

import (
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/browser"
)

// BenchmarkFirefoxRoundTrip is BenchmarkExtensionRoundTrip in Firefox ESR:
// what fillgate adds to one fill through the extension, the human
// excluded, from the start of `fillgate fill` until the browser shows the
// prompt page, plus from the human's Enter until `fillgate fill` exits
// with the result.
func BenchmarkFirefoxRoundTrip(b *testing.B) {
	ctx := testContext(b, 10*time.Minute)
	fx := startFirefox(b, ctx, browser.FirefoxOptions{})
	tb := fx.open(b, fx.origin1+"/password")
	secret := fx.secret(b)
	var toPrompt, toResult, total []time.Duration
	for b.Loop() {
		tb.eval(`(f => { f.value = ""; f.focus(); return document.activeElement === f; })(document.getElementById("pw"))`)
		a, n := fx.request(b, "--service", "127.0.0.1", "--then", "none")
		p := fx.awaitPrompt(b, n)
		p.typeSecret(secret)
		submitted := time.Now()
		p.typeKeys(enterKey)
		res, code := a.result(b, ctx)
		if res.Status != fill.StatusOK || code != 0 {
			b.Fatalf("result %+v, exit code %d", res, code)
		}
		open := fx.prompts.when(p.id).Sub(a.started)
		done := a.ended.Sub(submitted)
		toPrompt, toResult, total = append(toPrompt, open), append(toResult, done), append(total, open+done)
	}
	b.StopTimer()
	if !tb.holds(pwHolds, secret) {
		b.Errorf("value differed")
	}
	b.ReportMetric(median(total), "ms-median-roundtrip")
	b.ReportMetric(median(toPrompt), "ms-median-to-prompt")
	b.ReportMetric(median(toResult), "ms-median-submit-to-result")
	fx.finish(b)
}
