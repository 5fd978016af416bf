package pageprompt_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// savedInfo is a request with a saved value in a KeePassXC database for
// one of two accounts, whose database password the person types first,
// and the Remember box for a typed value.
func savedInfo() fill.PromptInfo {
	info := testInfo()
	info.From = "from KeePassXC: work/github in /home/a/db.kdbx"
	info.Accounts = []string{"alice@example.com", "bob"}
	info.Ask = "the password of the KeePassXC database /home/a/db.kdbx"
	info.Remember = true
	return info
}

// TestApproveWithTheFakeHuman: the page offers what the request says,
// Approve sends the account picked and the database password (sealed) and
// no value, and the prompt hands them over.
func TestApproveWithTheFakeHuman(t *testing.T) {
	ctx := testctx.New(t)
	dbPassword := leakscan.NewSecret(t)
	p, logs := startPrompt(t, ctx, savedInfo())
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatal(err)
	}
	o := page.Offers()
	if o.From != "from KeePassXC: work/github in /home/a/db.kdbx" || !slices.Equal(o.Accounts, []string{"alice@example.com", "bob"}) ||
		o.Ask != "The password of the KeePassXC database /home/a/db.kdbx" || !o.Remember || o.As != "" {
		t.Fatalf("the page offers %+v", o)
	}
	html := page.HTML()
	if err := page.Approve(ctx, fakehuman.ApproveOptions{Account: "bob", Ask: dbPassword}); err != nil {
		t.Fatal(err)
	}
	a, err := waitAnswer(t, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Zero()
	if !a.Approved || a.Account != "bob" || a.Value != nil || a.Remember {
		t.Errorf("answer approved %v account %q value %v remember %v", a.Approved, a.Account, a.Value != nil, a.Remember)
	}
	sameValue(t, a.Asked, dbPassword)
	if !strings.Contains(page.HTML(), "Approved.") {
		t.Error("the prompt did not show its Approved page")
	}
	noLeak(t, dbPassword, map[string][]byte{"the page": []byte(html), "the final page": []byte(page.HTML()), "log": logs.Bytes()})
}

// TestTheAccountThePageShows: "as …" on the page, from what the page
// showed, made safe to display.
func TestTheAccountThePageShows(t *testing.T) {
	ctx := testctx.New(t)
	info := testInfo()
	info.Account = "alice@example.com\u202e"
	info.From = "from the OS keyring"
	p, _ := startPrompt(t, ctx, info)
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatal(err)
	}
	if o := page.Offers(); o.As != "alice@example.com\uFFFD" || o.From != "from the OS keyring, as alice@example.com\uFFFD" || o.Remember || o.Ask != "" {
		t.Errorf("the page offers %+v", o)
	}
	if err := page.SubmitWith(ctx, []byte("x"), fakehuman.SubmitOptions{Remember: true}); err == nil {
		t.Error("the fake human ticked a Remember box the page does not have")
	}
	if err := page.Approve(ctx, fakehuman.ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	a, err := waitAnswer(t, ctx, p)
	if err != nil || !a.Approved || a.Account != "" || a.Asked != nil {
		t.Errorf("answer %v approved %v account %q", err, a.Approved, a.Account)
	}
}

// approveInRealChromium runs the page's own script: the database
// password typed into its field stays out of the page as the value does,
// the radio picks the account, Approve sends it; and on another prompt
// the Remember box goes with a typed value.
func approveInRealChromium(t *testing.T, sc sharedChromium) {
	ctx := testctx.New(t)
	browserCtx := sc.context(t)

	t.Run("approve", func(t *testing.T) {
		dbPassword := leakscan.NewSecret(t)
		p, logs := startPrompt(t, ctx, savedInfo())
		tab := openInChromium(t, browserCtx, p.URL())
		if id := eval[string](t, tab, `document.activeElement.id`); id != "ask" {
			t.Errorf("focused element on load is %q, want the database password's field", id)
		}
		if v := eval[[]string](t, tab, `window.__cspViolations`); len(v) != 0 {
			t.Errorf("CSP blocked parts of the page: %v", v)
		}
		if err := chromedp.Do(tab, chromedp.KeyEvent(string(dbPassword))); err != nil {
			t.Fatal(err)
		}
		tree, err := chromedp.Call(tab, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
		if err != nil {
			t.Fatalf("accessibility tree: %v", err)
		}
		ax, _ := json.Marshal(tree)
		dom := eval[string](t, tab, `document.getElementById("ask").value + document.documentElement.outerHTML`)
		if !eval[bool](t, tab, `document.querySelectorAll("input[name=account]")[0].checked`) {
			t.Error("the first account is not checked at first")
		}
		if !eval[bool](t, tab, `(() => { document.querySelectorAll("input[name=account]")[1].click(); return true })()`) {
			t.Fatal("pick the second account")
		}
		if err := chromedp.Do(tab, chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatal(err)
		}
		a, err := waitAnswer(t, ctx, p)
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
		defer a.Zero()
		if !a.Approved || a.Account != "bob" || a.Value != nil {
			t.Errorf("answer approved %v account %q value %v", a.Approved, a.Account, a.Value != nil)
		}
		sameValue(t, a.Asked, dbPassword)
		_ = p.Close()
		waitText(t, ctx, tab, "Approved. You can close this window.")
		noLeak(t, dbPassword, map[string][]byte{"the DOM": []byte(dom), "the accessibility tree": ax, "log": logs.Bytes()})
	})

	t.Run("remember", func(t *testing.T) {
		secret := leakscan.NewSecret(t)
		info := testInfo()
		info.Remember = true
		p, _ := startPrompt(t, ctx, info)
		tab := openInChromium(t, browserCtx, p.URL())
		if !eval[bool](t, tab, `(() => { document.getElementById("remember").click(); document.getElementById("value").focus(); return true })()`) {
			t.Fatal("tick the box")
		}
		typeAndEnter(t, tab, secret)
		a, err := waitAnswer(t, ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Zero()
		if a.Approved || !a.Remember {
			t.Errorf("answer approved %v remember %v", a.Approved, a.Remember)
		}
		sameValue(t, a.Value, secret)
	})
}

// TestPromptStillTakesATypedValue: with a saved value offered, the
// person may still type another one instead.
func TestPromptStillTakesATypedValue(t *testing.T) {
	ctx := testctx.New(t)
	secret := leakscan.NewSecret(t)
	p, _ := startPrompt(t, ctx, savedInfo())
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatal(err)
	}
	if err := page.SubmitWith(ctx, secret, fakehuman.SubmitOptions{Remember: true, Account: "alice@example.com"}); err != nil {
		t.Fatal(err)
	}
	a, err := waitAnswer(t, ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Zero()
	if a.Approved || !a.Remember || a.Account != "alice@example.com" || a.Asked != nil {
		t.Errorf("answer approved %v remember %v account %q", a.Approved, a.Remember, a.Account)
	}
	sameValue(t, a.Value, secret)
}
