package opener_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/opener"
	"github.com/fillgate/fillgate/internal/pageprompt"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// TestSystemOpenerPageInRealChromium plays the system opener with real
// Chromium: the page System writes is opened as a file:// URL in a
// tab, its meta refresh leads to a real prompt, which loads, takes the
// human's keystrokes and hands over the value; the page holds no value
// and is gone once the prompt ends.
func TestSystemOpenerPageInRealChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := browser.StartChromium(t, ctx, browser.ChromiumOptions{})
	browserCtx := c.Attach(t, ctx)

	life, end := context.WithCancel(ctx)
	defer end()
	p, err := pageprompt.Start(life, fill.PromptInfo{
		Agent: fill.Agent{Name: "claude", PID: 4121, Via: "fillgate fill"}, Service: "127.0.0.1",
		Origin: "http://127.0.0.1:8080", Field: fill.FieldPassword, Via: fill.ViaCDP, Budget: time.Minute,
	})
	if err != nil {
		t.Fatalf("start the prompt: %v", err)
	}
	defer func() { _ = p.Close() }()

	var tab context.Context
	var pagePath string
	var pageContent []byte
	o := opener.System{Dir: filepath.Join(t.TempDir(), "open"), Launch: func(_ context.Context, path string) error {
		pagePath = path
		pageContent, _ = os.ReadFile(path)
		var cancelTab context.CancelFunc
		tab, cancelTab = chromedp.NewContext(browserCtx)
		t.Cleanup(cancelTab)
		return chromedp.Do(tab, chromedp.Navigate("file://"+path))
	}}
	if err := o.OpenURL(life, p.URL()); err != nil {
		t.Fatalf("open: %v", err)
	}
	ready := `document.readyState === "complete" && location.href === ` + strconv.Quote(p.URL()) +
		` && !!document.getElementById("value")`
	for {
		ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](ready))
		if err == nil && ok {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the prompt's form never loaded from the page")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if _, err := chromedp.Call(tab, cdppage.BringToFront, cdp.Empty{}); err != nil {
		t.Fatalf("bring to front: %v", err)
	}
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](
		`new Promise(r => requestAnimationFrame(() => r()))`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("wait for a frame: %v", err)
	}
	secret := leakscan.NewSecret(t)
	if err := chromedp.Do(tab, chromedp.KeyEvent(string(secret)), chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatalf("type and press Enter: %v", err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	a, err := p.Wait(wctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if !bytes.Equal(a.Value, secret) {
		t.Errorf("value differed")
	}
	clear(a.Value)
	leakscan.Bytes(t, secret, "the redirect page", pageContent)
	if !bytes.Contains(pageContent, []byte(`http-equiv="refresh"`)) {
		t.Errorf("the opener was not handed the redirect page")
	}

	// The prompt ends: its page goes.
	_ = p.Close()
	end()
	for {
		if _, err := os.Lstat(filepath.Dir(pagePath)); errors.Is(err, os.ErrNotExist) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the redirect page outlived the prompt")
		case <-time.After(20 * time.Millisecond):
		}
	}
	leakscan.Bytes(t, secret, "Chromium's output", []byte(c.Output()))
}
