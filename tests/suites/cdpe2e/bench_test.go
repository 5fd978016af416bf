package cdpe2e

import (
	"github.com/fillgate/fillgate/tests/kit/median"

	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	hostcdp "github.com/fillgate/fillgate/internal/cdp"
	"github.com/fillgate/fillgate/internal/fill"
)

// BenchmarkCDPFill measures, on one browser in one run, fillgate's CDP
// fill (connect, locate the focused field through an isolated world,
// re-check and insert; no prompt) next to a bare Input.insertText round
// trip on an already attached session, and reports both medians and
// their ratio:
//
//	go test -run '^$' -bench CDPFill -benchtime 30x ./tests/suites/cdpe2e/
func BenchmarkCDPFill(b *testing.B) {
	e := newEnv(b)
	tb := e.openTab(e.originA + "/password")
	tb.click(100, 95)
	secret := e.secret()
	const clearField = `document.getElementById('pw').value = ''; true`
	var fills, bare []time.Duration
	for b.Loop() {
		tb.eval(clearField)
		value := append([]byte(nil), secret...)
		start := time.Now()
		br, err := hostcdp.Connect(e.step(), e.endpoint(), hostcdp.Options{Logf: e.log.Logf})
		if err != nil {
			b.Fatalf("connect: %v", err)
		}
		in, err := br.Inspect(e.step(), fill.Request{Service: "127.0.0.1", Field: fill.FieldPassword})
		if err != nil {
			b.Fatalf("inspect: %v", err)
		}
		v, err := br.Insert(e.step(), in, value, fill.InsertOptions{Then: fill.ThenNone})
		fills = append(fills, time.Since(start))
		clear(value)
		if err != nil || !v.Inserted || !v.Matched {
			b.Fatalf("insert: %+v %v", v, err)
		}
		_ = br.Close()

		tb.eval(clearField)
		start = time.Now()
		if _, err := chromedp.Call(tb.ctx, input.InsertText, input.InsertTextParams{Text: string(secret)}); err != nil {
			b.Fatalf("Input.insertText: %v", err)
		}
		bare = append(bare, time.Since(start))
	}
	if !fieldIs(b, tb.ctx, "pw", secret) {
		b.Fatalf("value differed")
	}
	mf, mb := median.Of(fills), median.Of(bare)
	b.ReportMetric(float64(mf.Microseconds())/1000, "fill-median-ms")
	b.ReportMetric(float64(mb.Microseconds())/1000, "inserttext-median-ms")
	if mb > 0 {
		b.ReportMetric(float64(mf)/float64(mb), "ratio")
	}
}
