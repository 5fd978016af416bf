package inpage

import (
	"github.com/fillgate/fillgate/tests/kit/median"

	"testing"
	"time"
)

// benchPages are timed by the visibility benchmarks: a plain field, a
// refusal decided by styles, one decided by the observer and the scan,
// and two ordinary pages the scan has to clear.
var benchPages = []string{"/password", "/trick/mask-image", "/trick/overlay-no-pointer-events", "/ok/floating-label", "/ok/bootstrap-floating-labels"}

// timeRequests times, over the native port, one request of type typ per
// iteration and its reply of type want, and reports the median.
func timeRequests(b *testing.B, h *hostConn, typ, want string) {
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		h.send(map[string]any{"id": i, "type": typ})
		h.expect(map[string]any{"id": i, "type": want})
		took = append(took, time.Since(start))
	}
	b.ReportMetric(median.Ms(took), "ms-median/op")
}

// BenchmarkExtensionInspect measures the extension path's inspect (every
// frame probed, the field judged) over a real native-messaging port.
func BenchmarkExtensionInspect(b *testing.B) {
	x := startHosted(b, testPages)
	for _, path := range benchPages {
		b.Run(name(path), func(b *testing.B) {
			x.focusedTab(b, path)
			timeRequests(b, &hostConn{t: b, ctx: x.h.ctx, conn: x.h.conn}, "inspect", "inspected")
		})
	}
}

// BenchmarkCDPProbe measures one probe of the in-page function in a CDP
// isolated world, as the CDP fallback runs it.
func BenchmarkCDPProbe(b *testing.B) {
	ctx := testContext(b)
	srv := serve(b, testPages)
	_, bctx := startBrowser(b, ctx, false)
	for _, path := range benchPages {
		b.Run(name(path), func(b *testing.B) {
			tb := openTab(b, bctx, srv.URL+path)
			tb.focus("f")
			tb.settle()
			top := tb.top()
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				tb.probe(top, "tok")
				took = append(took, time.Since(start))
			}
			b.ReportMetric(median.Ms(took), "ms-median/op")
		})
	}
}

// BenchmarkExtensionPeek measures the extension's peek (every frame
// probed, nothing judged or remembered): the cost of running the in-page
// function in a tab, over a real native-messaging port.
func BenchmarkExtensionPeek(b *testing.B) {
	x := startHosted(b, testPages)
	x.focusedTab(b, "/password")
	timeRequests(b, x.h, "peek", "peeked")
}
