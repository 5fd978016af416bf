package pageprompt_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// scriptCannotAnswer: a script in the prompt's page (one a program
// attached to the browser runs there) types, sends and approves nothing
// by dispatching events: the page takes only trusted keys and clicks. The
// person's own keys then answer as usual.
func scriptCannotAnswer(t *testing.T, sc sharedChromium) {
	ctx := testctx.New(t)
	browserCtx := sc.context(t)
	for _, saved := range []bool{false, true} {
		info := testInfo()
		if saved {
			info.From = "from pass"
		}
		p, _ := startPrompt(t, ctx, info)
		tab := openInChromium(t, browserCtx, p.URL())
		forged := `(() => {
  const f = document.getElementById("value");
  f.focus();
  f.dispatchEvent(new InputEvent("beforeinput", { inputType: "insertText", data: "forged-answer", bubbles: true, cancelable: true }));
  f.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
  document.getElementById("send").click();
  const a = document.getElementById("approve");
  if (a) a.click();
  return true;
})()`
		if ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](forged)); err != nil || !ok {
			t.Fatalf("saved %v: the forging script did not run: %v", saved, err)
		}
		wctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		a, err := p.Wait(wctx)
		cancel()
		if err == nil {
			clear(a.Value)
			t.Fatalf("saved %v: a script's events answered the prompt (approved %v)", saved, a.Approved)
		}
		secret := leakscan.NewSecret(t)
		if err := chromedp.Do(tab, chromedp.KeyEvent(string(secret)), chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatalf("saved %v: the person types: %v", saved, err)
		}
		gotValue(t, ctx, p, secret)
	}
}
