//go:build linux

package agents

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/agenttools"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// testContext bounds a whole browser test on a slow, shared machine.
func testContext(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// svc is the service of the login site on 127.0.0.1.
const svc = "127.0.0.1"

// inPagePolicy is basePolicy where the person lets fillgate type into
// the agent's browser, which a program drives (driven = "in-page"):
// a value the person types goes into the page, as in a browser nothing
// drives, for the tests of what the tools see of a field a fill typed
// into.
const inPagePolicy = basePolicy + "driven = \"in-page\"\n"

// TestNeverInTheAgentsTools: after an ok fill, on either path, for either
// kind of field, the agent's own tools, attached to the browser the whole
// time, find the value nowhere: not in a result, not in a file they saved,
// not in the page. The browser has a debugging port, so a program can
// drive it: under the person's default (the clean room) fillgate logs in
// in a browser of its own and the agent's tab is handed the session; where
// the person lets fillgate type into the agent's browser (driven =
// "in-page") the field the fill typed into is empty or gone once the
// result is back. then=none is the documented exception, in the page only
// (the clean room refuses it: TestAttackAgentsCannotAnswer), and its
// result says so.
func TestNeverInTheAgentsTools(t *testing.T) {
	t.Parallel()
	r, tools := newToolsRig(t, 6*time.Minute)
	agent := fillgateMCP(t, r.ctx, tools.d, "fillgate-mcp", r.env)

	for _, via := range []string{fill.ViaExtension, fill.ViaCDP} {
		for _, mode := range []struct {
			name, policy string
			cleanRoom    bool
		}{
			{"clean room", basePolicy, true},
			{"in-page", inPagePolicy, false},
		} {
			for _, c := range []struct {
				name, path, field, id string
			}{
				{"password", "/login", fill.FieldPassword, "pw"},
				{"one-time code", "/otp", fill.FieldOTP, "otp"},
			} {
				t.Run(via+"/"+mode.name+"/"+c.name, func(t *testing.T) {
					r.writePolicy(mode.policy)
					defer r.writePolicy(basePolicy)
					secret := r.Secret(t)
					if c.field == fill.FieldOTP {
						secret = r.Code(t)
					}
					tb := r.open(t, r.site1, c.path)
					tb.focus(c.id)
					m := tools.mark(t)
					run, p := r.ask(t, "--service", svc, "--field", c.field, "--via", via)
					p.send(secret)
					res := run.result(t)
					if res.Status != fill.StatusOK || res.Via != via || res.Origin != r.site1.origin {
						t.Fatalf("result %+v; want ok via %s into %s", res, via, r.site1.origin)
					}
					handed := res.HandedOver != nil && *res.HandedOver && res.TabOrigin == r.site1.origin
					if handed != mode.cleanRoom || (!mode.cleanRoom && res.HandedOver != nil) {
						t.Errorf("result %+v; want it handed over to the agent's tab from the clean room: %v", res, mode.cleanRoom)
					}
					// Right away, as an agent would look after a login.
					tools.readPage(t, tb, secret, m)
					if !tb.holdsNowhere(secret) {
						t.Errorf("the page still holds the value after the fill returned (the %s field is neither empty nor gone)", c.name)
					}
					r.waitPromptClosed(t, p)
					r.scanFillgate(t, secret)
				})
			}
		}

		// then=none is the documented exception: the value stays in the
		// field, and the result says the page (and any tool reading it)
		// can see it. (Through the MCP tool, the agent's usual way.)
		t.Run(via+"/in-page/then none says the page can see the field", func(t *testing.T) {
			policy := inPagePolicy
			if via == fill.ViaCDP {
				policy += "via = \"cdp\"\n"
			}
			r.writePolicy(policy)
			defer r.writePolicy(basePolicy)
			secret := r.Secret(t)
			tb := r.open(t, r.site1, "/login")
			tb.focus("pw")
			m := tools.mark(t)
			n := r.prompts.Count()
			call, err := agent.Start("request_secret", map[string]any{"service": svc, "then": "none"}, agenttools.CallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p := r.awaitPrompt(t, n)
			p.send(secret)
			raw, err := call.Wait(r.ctx)
			if err != nil {
				t.Fatal(err)
			}
			res := mcpResult(t, raw)
			if res.Status != fill.StatusOK || res.Via != via || raw.IsError || res.HandedOver != nil {
				t.Fatalf("result %+v (isError %v); want ok via %s, in the page", res, raw.IsError, via)
			}
			if !strings.Contains(res.Detail, "can see") {
				t.Errorf("the detail %q does not say that the page, and any tool reading it, can see the field", res.Detail)
			}
			if !tb.holds("pw", secret) {
				t.Errorf("with then=none the field does not hold the value")
			}
			r.waitPromptClosed(t, p)
			r.scanFillgate(t, secret)
			tools.scan(t, secret, m) // no tool read this page
		})
	}
}

// TestCDPTabPromptToPlaywright: with prompt_opener = cdp-tab the prompt
// opens as a tab of the CDP browser, in a browser context of its own. An
// attached Playwright lists every page target it can see, that context's
// too (crBrowser files pages of contexts it did not make under its default
// one), so the agent's Playwright MCP lists the prompt's tab: what it
// must never get is what the person types. While the person is typing,
// Playwright MCP selects the prompt's tab and takes a snapshot of it, and
// chrome-devtools-mcp takes its own: neither result, nor any file they
// wrote, holds the value or a mask as long as it; the fill then goes on.
func TestCDPTabPromptToPlaywright(t *testing.T) {
	t.Parallel()
	r, tools := newToolsRig(t, 4*time.Minute)
	secret := r.Secret(t)
	tb := r.open(t, r.site1, "/login")
	tb.focus("pw")
	m := tools.mark(t)
	run, p := r.ask(t, "--service", svc, "--via", fill.ViaCDP)
	u, err := url.Parse(p.url)
	if err != nil || len(u.Path) < 8 {
		t.Fatalf("the prompt's URL has no nonce")
	}
	half := secret[:len(secret)/2]
	if err := chromedp.Do(p.ctx, chromedp.KeyEvent(string(half))); err != nil {
		t.Fatal("type into the prompt failed")
	}

	tabs := tools.call(t, tools.pw, secret, "browser_tabs", map[string]any{"action": "list"})
	i, ok := listIndex(tabs, `(?m)^- (\d+): .*`, u.Path)
	if !ok {
		t.Fatalf("Playwright MCP does not list the prompt's tab (the test expects it to): %s", r.Withheld([]byte(tabs)))
	}
	tools.call(t, tools.pw, secret, "browser_tabs", map[string]any{"action": "select", "index": i})
	snap := tools.call(t, tools.pw, half, "browser_snapshot", map[string]any{})
	if !strings.Contains(snap, "textbox") {
		t.Fatalf("the snapshot does not show the prompt's field, so it proves nothing: %s", r.Withheld([]byte(snap)))
	}
	leakscan.Agent(t, half, "Playwright MCP's snapshot of the prompt", []byte(snap))
	pages := tools.call(t, tools.cd, secret, "list_pages", map[string]any{})
	if id, ok := listIndex(pages, `(?m)^(\d+): .*`, u.Path); ok {
		out := tools.call(t, tools.cd, half, "take_snapshot", map[string]any{"pageId": id})
		leakscan.Agent(t, half, "chrome-devtools-mcp's snapshot of the prompt", []byte(out))
	}

	// The person goes on typing and sends.
	if _, err := chromedp.Call(p.ctx, page.BringToFront, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	p.send(secret[len(half):])
	res := run.result(t)
	if res.Status != fill.StatusOK {
		t.Fatalf("result %+v; want ok", res)
	}
	tools.scan(t, secret, m)
	tools.scan(t, half, m)
	r.scanFillgate(t, secret)
}

// TestPinnedTabOnlyNarrows: a pinned tab (--tab) that is not the active
// tab of its window is refused at once, on either path, and the refusal
// names neither its origin nor its field; the same pin in front goes
// ahead to the prompt.
func TestPinnedTabOnlyNarrows(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 4*time.Minute)
	r := newRig(t, ctx, basePolicy)
	for _, via := range []string{fill.ViaExtension, fill.ViaCDP} {
		t.Run(via, func(t *testing.T) {
			bg := r.openBeside(t, r.site1, "/login")
			bg.focus("pw")
			id := string(bg.id)
			if via == fill.ViaExtension {
				id = r.extensionTabID(t, bg)
			}
			r.openBeside(t, r.site2, "/other") // in front of it, in its window
			n := r.prompts.Count()
			run := r.fill(t, "--service", svc, "--via", via, "--tab", id)
			if opened, err := r.prompts.OpenedOrDone(r.ctx, n, run.Done()); err != nil || opened {
				t.Errorf("a prompt opened for the pinned background tab (%v)", err)
				r.closeWindow(t, r.awaitPrompt(t, n))
				n++
			}
			wantBackgroundRefusal(t, r, run.result(t))

			bg.front()
			run = r.fill(t, "--service", svc, "--via", via, "--tab", id)
			p := r.awaitPrompt(t, n)
			r.closeWindow(t, p)
			if res := run.result(t); res.Status != fill.StatusCancelled || res.Origin != r.site1.origin {
				t.Errorf("the pinned tab in front: %+v; want cancelled at the prompt", res)
			}
		})
	}
}

// wantBackgroundRefusal checks the refusal of a pinned background tab:
// refused at once, no prompt, and nothing of the tab named.
func wantBackgroundRefusal(t *testing.T, r *rig, res fill.Result) {
	t.Helper()
	if res.Status != fill.StatusRefused || !strings.Contains(res.Detail, "not the active tab of its window") {
		t.Errorf("result %+v; want refused: not the active tab of its window", res)
	}
	if res.Origin != "" || strings.Contains(res.Detail, r.site1.origin) || strings.Contains(res.Detail, "password") {
		t.Errorf("the refusal names the background tab's origin or field: %+v", res)
	}
}

// extensionTabID asks the extension (from its own popup page, in a tab
// beside tb that closes again) for tb's tab id.
func (r *rig) extensionTabID(t *testing.T, tb *tab) string {
	t.Helper()
	ctx, cancel := chromedp.NewContext(r.bctx, chromedp.WithNewWindow(false))
	defer cancel() // closes the popup's tab
	if err := chromedp.Do(ctx, chromedp.Navigate(manifest.ExtensionOrigin+"popup.html")); err != nil {
		t.Fatalf("open the extension's popup: %v", err)
	}
	id, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`chrome.tabs.query({}).then((ts) => ts.find((x) => x.url === `+quote(tb.url)+`)?.id ?? -1)`,
		chromedp.EvalAwaitPromise))
	if err != nil || id < 0 {
		t.Fatalf("the extension's id of the tab: %d, %v", id, err)
	}
	return strconv.FormatInt(id, 10)
}
