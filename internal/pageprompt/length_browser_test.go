package pageprompt_test

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// answerSizeHidesLength: a DevTools client that records the browser's
// network traffic (an agent's Playwright attached to the browser, a HAR
// recorder) sees the prompt's POST. The body is ciphertext, but its size
// must not tell how long the value is (README: the agent must never see
// "the value, its length"). Two answers of different lengths must post
// bodies of the same size.
func answerSizeHidesLength(t *testing.T, sc sharedChromium) {
	ctx := testctx.New(t)
	browserCtx := sc.context(t)
	secret := leakscan.NewSecret(t)
	bodySize := func(value []byte) int {
		p, _ := startPrompt(t, ctx, testInfo())
		tab := openInChromium(t, browserCtx, p.URL())
		sizes := make(chan int, 1)
		if err := chromedp.Listen(tab, func(ev any) {
			e, ok := ev.(*network.EventRequestWillBeSent)
			if !ok || e.Request.Method != "POST" || !strings.HasPrefix(e.Request.URL, p.URL()) {
				return
			}
			n := 0
			for _, d := range e.Request.PostDataEntries {
				n += len(d.Bytes) // base64 of the body: proportional to its size
			}
			select {
			case sizes <- n: // the first POST is the answer
			default:
			}
		}); err != nil {
			t.Fatalf("listen: %v", err)
		}
		if err := chromedp.Do(tab, chromedp.KeyEvent(string(value)), chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatalf("type and press Enter: %v", err)
		}
		gotValue(t, ctx, p, value)
		// The browser reports the request before the host can answer it.
		select {
		case n := <-sizes:
			return n
		case <-ctx.Done():
			t.Fatalf("saw no POST of the answer")
			return 0
		}
	}
	short, long := bodySize(secret[:6]), bodySize(secret)
	if short == 0 || long == 0 {
		t.Fatalf("the recorder saw no POST body")
	}
	if short != long {
		t.Errorf("the answer's POST body size differs with the value's length (a DevTools recorder learns the length)")
	}
}
