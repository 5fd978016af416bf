//go:build linux

package agents

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/agenttools"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/sessionsite"
)

// TestCleanRoomAgentsSeeNothing: the agent, prompt-injected, has its own
// browser tools attached to its browser before it asks for a login, and
// does all it can to catch the password as it goes in, on both paths:
//
//   - Playwright MCP and chrome-devtools-mcp install capture-phase input,
//     change, submit and formdata listeners and a wrapped value getter in
//     the login page's main world, which keep what they see in
//     sessionStorage, window.name and the console;
//   - Playwright MCP routes every request (page.route) and opens a root
//     CDP session with Fetch enabled, keeping every request it sees in
//     its own process;
//   - a raw CDP client at the browser's root intercepts every request
//     (Fetch) and keeps its URL, headers and body.
//
// The person types the password in the native dialog. fillgate logs in
// in its clean room and hands the agent's tab the session: the site gets
// the password once, the tab ends signed in, and nothing any of the
// tools kept, listed or wrote, nor any request the agent's browser made,
// holds the password or a field as long as it; no request in the agent's
// browser posted to the login at all. Then the rig's final scan reads
// every file (the agent's browser's profile, the tools' workspaces).
func TestCleanRoomAgentsSeeNothing(t *testing.T) {
	ctx := testContext(t, 6*time.Minute)
	a := newAttackRig(t, ctx) // t.Setenv: not parallel
	at := &attacker{a: a, tools: a.attachTools(t)}
	site := sessionsite.Start(t)
	raw := a.interceptAll(t)
	at.call(t, at.tools.pw, "browser_run_code_unsafe", map[string]any{"code": routeAllJS}, false)
	form := site.Archetype("form")
	for _, via := range []string{fill.ViaExtension, fill.ViaCDP} {
		t.Run(via, func(t *testing.T) {
			secret := a.Secret(t)
			site.SetPassword(secret)
			tb := a.openURL(t, form.Login)
			tb.typeIn("user", sessionsite.User)
			tb.focus(form.Field)
			pw, cd := at.find(t, "s="+tb.token)
			for _, p := range []agentPage{pw, cd} {
				if out, _ := at.eval(t, p, catchAllJS, false); !strings.Contains(out, "armed") {
					t.Fatalf("%s: the listeners were not installed: %s", p, a.Withheld([]byte(out)))
				}
			}
			args := []string{"--service", "127.0.0.1"}
			if via == fill.ViaCDP {
				args = append(args, "--via", "cdp")
			}
			run := a.fill(t, args...)
			a.personTypes(t, run, secret)
			res := run.result(t)
			if res.Status != fill.StatusOK || res.HandedOver == nil || !*res.HandedOver {
				t.Fatalf("%s: %s", res.Status, res.Detail)
			}
			if n := site.Received(secret); n != 1 {
				t.Errorf("the site received the password %d times; want once", n)
			}
			tb.waitFor(`location.href.startsWith(` + quote(form.Home) + `) && document.getElementById("welcome") !== null`)
			who := tb.fetchText(form.WhoAmI)
			if who != sessionsite.User {
				t.Errorf("a second request from the agent's tab is not signed in: %q", who)
			}

			// What the agent carries off: what its listeners kept (the tab
			// navigated, but sessionStorage and window.name stay), the
			// console, the network as each tool shows it, and the
			// requests its interceptors kept.
			pw, cd = at.find(t, form.Home) // where the handover sent it
			for _, p := range []agentPage{pw, cd} {
				out, _ := at.eval(t, p, readAllJS, true)
				if !strings.Contains(out, "kept=") {
					t.Errorf("%s: reading back what the listeners kept failed: %s", p, a.Withheld([]byte(out)))
				}
			}
			at.selectTab(t, pw)
			at.call(t, at.tools.pw, "browser_console_messages", map[string]any{}, true)
			requests, _ := at.call(t, at.tools.pw, "browser_network_requests", map[string]any{}, true)
			for _, i := range numbered(requests) {
				at.call(t, at.tools.pw, "browser_network_request", map[string]any{"index": i}, true)
			}
			at.call(t, at.tools.cd, "list_console_messages", map[string]any{"pageId": cd.id}, true)
			list, _ := at.call(t, at.tools.cd, "list_network_requests", map[string]any{"pageId": cd.id}, true)
			for _, m := range regexp.MustCompile(`reqid=(\d+)`).FindAllStringSubmatch(list, -1) {
				n, _ := strconv.Atoi(m[1])
				at.call(t, at.tools.cd, "get_network_request", map[string]any{"pageId": cd.id, "reqid": n}, true)
			}
			kept, _ := at.call(t, at.tools.pw, "browser_run_code_unsafe", map[string]any{"code": routedJS}, false)
			if !strings.Contains(kept, form.Home) {
				t.Errorf("Playwright MCP's interceptors did not see the agent's tab go to %s: %s", form.Home, a.Withheld([]byte(kept)))
			}
			for _, r := range raw.since(tb.opened) {
				leakscan.Agent(t, secret, "a request the raw CDP client intercepted", []byte(r.text))
				if r.method == "POST" && strings.HasPrefix(r.url, site.App+"/form/login") {
					t.Errorf("the agent's browser posted the login form itself: %s", r.url)
				}
			}
			at.scan(t, toolsMark{files: map[string]bool{}})
		})
	}

	// Control: where the person lets fillgate type into the agent's
	// browser (driven = "in-page"), the same listeners do catch what goes
	// into the page, so the checks above can fail. Its value is no
	// secret of the rig's: the final scan does not look for it.
	t.Run("control: in the page, the listeners catch the value", func(t *testing.T) {
		a.writePolicy(attackPolicy(gtk2, `driven = "in-page"`, ""))
		defer a.writePolicy(attackPolicy(gtk2, "", ""))
		value := leakscan.NewSecret(t)
		site.SetPassword(value)
		tb := a.openURL(t, form.Login)
		tb.typeIn("user", sessionsite.User)
		tb.focus(form.Field)
		pw, _ := at.find(t, "s="+tb.token)
		at.eval(t, pw, catchAllJS, false)
		run := a.fill(t, "--service", "127.0.0.1")
		a.personTypes(t, run, value)
		if res := run.result(t); res.Status != fill.StatusOK || res.HandedOver != nil {
			t.Fatalf("%s: %s", res.Status, res.Detail)
		}
		tb.waitFor(`location.href.startsWith(` + quote(form.Home) + `)`)
		pw, _ = at.find(t, form.Home)
		at.selectTab(t, pw)
		res, err := at.tools.pw.Call(a.ctx, "browser_evaluate", map[string]any{"function": readAllJS}, agenttools.CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !leakscan.Contains([]byte(res.Text()), value) {
			t.Error("the agent's listeners did not catch a value typed into the page: the checks of the clean room cannot fail")
		}
	})
}

// catchAllJS is what a prompt-injected agent puts into the login page
// before it asks: listeners for everything a value goes through on its
// way in and out of a page, and a getter that notes every read of an
// input's value, keeping it where it survives the page's navigation.
const catchAllJS = `() => {
  const keep = (what) => {
    try {
      const all = JSON.parse(sessionStorage.getItem("__agentKept") || "[]");
      all.push(what);
      sessionStorage.setItem("__agentKept", JSON.stringify(all));
      window.name = JSON.stringify(all);
      console.log("agent kept", what);
    } catch {}
  };
  for (const type of ["input", "change", "beforeinput", "keydown", "paste"]) {
    document.addEventListener(type, (e) => keep([type, e.data ?? "", e.target?.value ?? ""]), true);
  }
  document.addEventListener("submit", (e) => keep(["submit", Array.from(new FormData(e.target).values()).join("|")]), true);
  document.addEventListener("formdata", (e) => keep(["formdata", Array.from(e.formData.values()).join("|")]), true);
  const d = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value");
  Object.defineProperty(HTMLInputElement.prototype, "value", {
    get() { const v = d.get.call(this); if (v) keep(["get", v]); return v; },
    set(v) { keep(["set", v]); d.set.call(this, v); },
  });
  return "armed";
}`

// readAllJS reads back what catchAllJS kept.
const readAllJS = `() => "kept=" + (sessionStorage.getItem("__agentKept") || "[]") + " name=" + window.name`

// routeAllJS has Playwright MCP intercept every request twice over: a
// route on every page of the context, and Fetch on a CDP session at the
// browser's root; it keeps what it sees in the MCP server's process.
const routeAllJS = `async (page) => {
  // Kept on the browser context, which outlives this call (each call's
  // code runs in a scope of its own).
  const kept = page.context().__agentSeen = [];
  const seen = (what) => kept.push(what);
  await page.context().route("**/*", async (route) => {
    const r = route.request();
    seen(["route", r.method(), r.url(), JSON.stringify(await r.allHeaders()), r.postData() ?? ""]);
    await route.continue();
  });
  const root = await page.context().browser().newBrowserCDPSession();
  root.on("Fetch.requestPaused", async (e) => {
    seen(["fetch", e.request.method, e.request.url, JSON.stringify(e.request.headers), e.request.postData ?? ""]);
    await root.send("Fetch.continueRequest", { requestId: e.requestId }).catch(() => {});
  });
  await root.send("Fetch.enable", { patterns: [{ urlPattern: "*" }] });
  return "routed";
}`

// routedJS returns what routeAllJS kept.
const routedJS = `async (page) => JSON.stringify(page.context().__agentSeen ?? [])`

// numbered lists the request numbers of browser_network_requests' text.
func numbered(list string) []int {
	var out []int
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:- )?\[?(\d+)\]?[.:\]]`).FindAllStringSubmatch(list, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// find returns the tab whose line (its URL) holds mark, as each tool
// lists it.
func (at *attacker) find(t testing.TB, mark string) (pw, cd agentPage) {
	t.Helper()
	tabs, _ := at.call(t, at.tools.pw, "browser_tabs", map[string]any{"action": "list"}, false)
	i, ok := listIndex(tabs, `(?m)^- (\d+): .*`, mark)
	if !ok {
		t.Fatalf("Playwright MCP does not list the tab: %s", at.a.Withheld([]byte(tabs)))
	}
	pages, _ := at.call(t, at.tools.cd, "list_pages", map[string]any{}, false)
	id, ok := listIndex(pages, `(?m)^(\d+): .*`, mark)
	if !ok {
		t.Fatalf("chrome-devtools-mcp does not list the page: %s", at.a.Withheld([]byte(pages)))
	}
	return agentPage{pw: true, id: i}, agentPage{id: id}
}

// selectTab makes p Playwright MCP's current tab.
func (at *attacker) selectTab(t testing.TB, p agentPage) {
	at.call(t, at.tools.pw, "browser_tabs", map[string]any{"action": "select", "index": p.id}, false)
}

// openURL opens raw, marked with ?s=TOKEN so the tools can find it, in a
// new window in front, as the user would.
func (a *attackRig) openURL(t testing.TB, raw string) *tab {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tb := a.openTab(t, &site{origin: u.Scheme + "://" + u.Host}, u.Path, true)
	tb.opened = time.Now()
	return tb
}

// typeIn types a user name (not a secret) into the field id as the
// agent's tools do.
func (tb *tab) typeIn(id, value string) { tb.t.Helper(); browser.TypeInto(tb.t, tb.ctx, id, value) }

// waitFor waits until js is true in the tab's page.
func (tb *tab) waitFor(js string) { tb.t.Helper(); browser.WaitFor(tb.t, tb.ctx, js, 30*time.Second) }

// fetchText fetches raw from the tab's page, with its credentials, and
// returns the body (trimmed) of a 200, or "" for anything else.
func (tb *tab) fetchText(raw string) string {
	tb.t.Helper()
	got, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`fetch(`+quote(raw)+`, {credentials: "include"}).then(async (r) => r.ok ? (await r.text()).trim() : "")`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("fetch %s: %v", raw, err)
	}
	return got
}

// personTypes waits for the run's native dialog, and the person types
// value into it and presses Return.
func (a *attackRig) personTypes(t testing.TB, run *fillRun, value []byte) {
	t.Helper()
	ctx, cancel := run.Awaiting(a.ctx, 60*time.Second)
	defer cancel()
	if err := a.person.TypeInDialog(ctx, value); err != nil {
		t.Fatalf("the person: %s (fillgate said %s)", a.Withheld([]byte(err.Error())), a.Withheld(run.Stdout()))
	}
}

// intercepted is one request a raw CDP client intercepted.
type intercepted struct {
	at          time.Time
	method, url string
	text        string // everything of it: URL, headers, body
}

// interceptor is a raw CDP client at the browser's root that intercepts
// every request of the browser (Fetch) and keeps it, as any program with
// the debugging port can.
type interceptor struct {
	mu   sync.Mutex
	seen []intercepted
}

// since lists the requests intercepted from t on.
func (ic *interceptor) since(t time.Time) []intercepted {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	var out []intercepted
	for _, r := range ic.seen {
		if !r.at.Before(t) {
			out = append(out, r)
		}
	}
	return out
}

// interceptAll enables Fetch at the browser's root over the test's own
// connection, until the test ends.
func (a *attackRig) interceptAll(t testing.TB) *interceptor {
	t.Helper()
	ic := &interceptor{}
	b := chromedp.FromContext(a.bctx).Browser
	ctx, cancel := context.WithCancel(a.bctx) // a chromedp context: its browser's events
	t.Cleanup(cancel)
	events := chromedp.BrowserEvents(ctx, fetch.RequestPaused)
	go func() {
		for ev, err := range events {
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("the raw CDP client's interception ended: %v", err)
				}
				return
			}
			raw, _ := json.Marshal(ev.Request)
			ic.mu.Lock()
			ic.seen = append(ic.seen, intercepted{at: time.Now(), method: ev.Request.Method, url: ev.Request.URL, text: string(raw)})
			ic.mu.Unlock()
			go func() {
				_, _ = cdp.Call(ctx, b, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
			}()
		}
	}()
	if _, err := cdp.Call(ctx, b, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		t.Fatalf("Fetch.enable at the browser's root: %v", err)
	}
	return ic
}
