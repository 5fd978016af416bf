package pageprompt_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// TestDevToolsRecorderSeesOnlyCiphertext records the prompt's traffic
// over the DevTools protocol's Network domain, as a HAR or trace recorder
// (or an agent's own browser tools) attached to the browser does, while
// the human answers in real Chromium: the one answer it sees is the
// encrypted one, and the value is nowhere in what it recorded.
func TestDevToolsRecorderSeesOnlyCiphertext(t *testing.T) {
	ctx := testctx.New(t)
	c := browser.StartChromium(t, ctx, browser.ChromiumOptions{})
	bctx := c.Attach(t, ctx)
	secret := leakscan.NewSecret(t)
	p, logs := startPrompt(t, ctx, testInfo())
	tab := openInChromium(t, bctx, p.URL())
	rec := browser.Record(t, tab)
	typeAndEnter(t, tab, secret)
	gotValue(t, ctx, p, secret)
	waitState(t, ctx, tab, "sent")

	var answers []url.Values
	for _, post := range rec.Posts(t) {
		q, err := url.ParseQuery(string(post.Body))
		if err != nil {
			t.Fatalf("a POST body DevTools recorded is not a form body")
		}
		if q.Get("action") != "watch" {
			answers = append(answers, q)
		}
	}
	if len(answers) != 1 {
		t.Fatalf("DevTools recorded %d answers, want the one", len(answers))
	}
	a := answers[0]
	sealed, err := base64.RawURLEncoding.DecodeString(a.Get("answer"))
	if a.Get("action") != "submit" || a.Has("value") || err != nil || len(sealed) < 60 {
		t.Errorf("the recorded answer is not csrf, action=submit and a sealed answer alone: fields %v", keys(a))
	}
	leakscan.Bytes(t, secret, "what DevTools recorded", rec.All(t))
	leakscan.Bytes(t, secret, "the prompt's log", logs.Bytes())
}

func keys(q url.Values) []string {
	var out []string
	for k := range q {
		out = append(out, k)
	}
	return out
}

// internalsLog is the text of chrome://password-manager-internals, which
// logs the password manager's decisions while it is open.
func internalsLog(t *testing.T, internals context.Context) string {
	t.Helper()
	return eval[string](t, internals, `document.body.innerText`)
}

// waitLog polls the internals log until it holds want n times.
func waitLog(t *testing.T, ctx, internals context.Context, want string, n int) string {
	t.Helper()
	for {
		text := internalsLog(t, internals)
		if strings.Count(text, want) >= n {
			return text
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the password manager's log never said %q %d times", want, n)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestPasswordManagerNeverOffersToSave answers the prompt in real
// Chromium with chrome://password-manager-internals open, Chromium's own
// record of what its password manager decides: for the prompt it never
// considers saving anything (no provisional save, no "Decision: ASK").
// Then, as the control that shows the signal works, a page with a password
// field in a form (what the prompt used to be) makes it ask.
func TestPasswordManagerNeverOffersToSave(t *testing.T) {
	ctx := testctx.New(t)
	c := browser.StartChromium(t, ctx, browser.ChromiumOptions{})
	bctx := c.Attach(t, ctx)
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/form":
			fmt.Fprint(w, `<form method="post" action="/done"><input id="value" name="value" type="password" autocomplete="off" autofocus><button>Send</button></form>`)
		default:
			fmt.Fprint(w, `<p>elsewhere</p>`)
		}
	}))
	defer pages.Close()
	internals, cancel := chromedp.NewContext(bctx)
	defer cancel()
	if err := chromedp.Do(internals, chromedp.Navigate("chrome://password-manager-internals")); err != nil {
		t.Fatalf("open the password manager's log: %v", err)
	}

	secret := leakscan.NewSecret(t)
	p, _ := startPrompt(t, ctx, testInfo())
	tab := openInChromium(t, bctx, p.URL())
	typeAndEnter(t, tab, secret)
	gotValue(t, ctx, p, secret)
	waitState(t, ctx, tab, "sent")
	// Leaving the page is when a password manager decides about a
	// submission at the latest; its log records the navigation after
	// whatever it made of the prompt.
	navs := strings.Count(internalsLog(t, internals), "DidNavigateMainFrame")
	if err := chromedp.Do(tab, chromedp.Navigate(pages.URL+"/elsewhere")); err != nil {
		t.Fatalf("leave the prompt: %v", err)
	}
	log := waitLog(t, ctx, internals, "DidNavigateMainFrame", navs+1)
	for _, bad := range []string{"ProvisionallySaveForm", "Decision: ASK", "OnPasswordFormSubmitted", "Decision: SAVE"} {
		if strings.Contains(log, bad) {
			t.Errorf("the password manager's log says %q for the prompt", bad)
		}
	}
	leakscan.Bytes(t, secret, "the password manager's log", []byte(log))

	// The control: a password field in a form, submitted.
	control := openInChromium(t, bctx, pages.URL+"/form")
	typeAndEnter(t, control, []byte("control-password-7d1e"))
	waitLog(t, ctx, internals, "Decision: ASK", 1)
}
