//go:build linux

package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/fillgate/fillgate/host/fill"
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
	ch := startChromium(b, ctx)
	tb := ch.open(b, ch.origin1+"/password")
	secret := ch.secret(b)
	var toPrompt, toResult, total []time.Duration
	for b.Loop() {
		tb.eval(`(f => { f.value = ""; f.focus(); return document.activeElement === f; })(document.getElementById("pw"))`)
		a, n := ch.request(b, "--service", "127.0.0.1", "--then", "none")
		p := ch.awaitPrompt(b, n)
		p.typeSecret(secret)
		submitted := time.Now()
		p.enter()
		res, code := a.result(b, ctx)
		if res.Status != fill.StatusOK || code != 0 {
			b.Fatalf("result %+v, exit code %d", res, code)
		}
		open := ch.prompts.when(p.id).Sub(a.started)
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
	ch.finish(b)
}

// median is the median of ds in milliseconds.
func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}
