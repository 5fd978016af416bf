package inpage

import (
	"github.com/fillgate/fillgate/tests/kit/median"

	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// BenchmarkAfterFill measures what submit-and-clear adds to a fill beyond
// the page's own navigation or script login, on the login site in real
// Chromium (the in-page function over CDP, as both paths run it):
//
//	extra = (insert + submit + leave nothing) − (insert alone) − (the page's own submit until it navigates / drops the field)
//
// It reports the medians in ms:
//
//	go test -run '^$' -bench AfterFill -benchtime 15x ./tests/suites/inpage/
func BenchmarkAfterFill(b *testing.B) {
	s := newSite(b)
	secret := leakscan.NewSecret(b)
	defer clear(secret)
	s.login.SetRight(secret)
	cases := []struct {
		name, path string
		// own is the page's own submit, run in its main world, resolving
		// when the page starts to leave or drops its field.
		own string
	}{
		{"classic POST", "/classic", `() => new Promise((r) => { addEventListener("beforeunload", r, { once: true }); document.getElementById("login").requestSubmit(); })`},
		{"React fetch login", "/react", `() => new Promise((r) => { new MutationObserver(() => { if (!document.getElementById("pw")) r(); }).observe(document.body, { subtree: true, childList: true }); document.getElementById("login").requestSubmit(); })`},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var insertOnly, submit, own []time.Duration
			for b.Loop() {
				insertOnly = append(insertOnly, s.timeFill(b, c.path, "none", secret, ""))
				own = append(own, s.timeFill(b, c.path, "none", secret, c.own)-insertOnly[len(insertOnly)-1])
				submit = append(submit, s.timeFill(b, c.path, "submit", secret, ""))
			}
			b.ReportMetric(median.Ms(insertOnly), "ms-insert")
			b.ReportMetric(median.Ms(submit), "ms-insert+submit")
			b.ReportMetric(median.Ms(own), "ms-page-own-submit")
			b.ReportMetric(median.Ms(submit)-median.Ms(insertOnly)-median.Ms(own), "ms-extra")
		})
	}
}

// timeFill opens path, focuses pw, and times the in-page insert with then
// (and, when own is set, the page's own submit after it, run in its main
// world).
func (s *site) timeFill(b *testing.B, path, then string, secret []byte, own string) time.Duration {
	b.Helper()
	tb := openTab(b, s.bctx, s.login.URL+path)
	tb.focus("pw")
	tb.probe(tb.top(), "tok")
	start := time.Now()
	v := tb.insertThen(tb.top(), "tok", s.login.URL, "password", then, secret)
	if own != "" {
		win, err := chromedp.Run(tb.ctx, chromedp.Evaluate[*runtime.RemoteObject]("window"))
		if err == nil {
			_, err = chromedp.Run(tb.ctx, chromedp.CallFunctionOn[bool](`async function () { await (`+own+`)(); return true; }`,
				func(p *runtime.CallFunctionOnParams) { p.ObjectID, p.AwaitPromise = win.ObjectID, new(true) }))
		}
		if err != nil {
			b.Fatalf("the page's own submit: %v", err)
		}
	}
	d := time.Since(start)
	if !v.Inserted || then == "submit" && (!v.Submitted || v.Remains) {
		b.Fatalf("verdict %+v", v)
	}
	// Close the tab: a benchmark of 20 iterations opens 120, and a
	// browser holding them all slows each next fill down.
	if err := chromedp.Cancel(tb.ctx); err != nil {
		b.Fatalf("close the tab: %v", err)
	}
	return d
}
