//go:build linux

package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/kit/agenttools"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// attacker is the agent, prompt-injected, with its own browser tools
// (Playwright MCP and chrome-devtools-mcp, attached to the person's
// browser the whole time): it lists every page, scripts every page,
// looks for something to click and types its own answers, while a fill
// waits for the person.
type attacker struct {
	a     *attackRig
	tools *agentTools
}

// agentPage is one page an agent tool lists: Playwright MCP's tab index or
// chrome-devtools-mcp's page id, and the line that lists it.
type agentPage struct {
	pw   bool // Playwright MCP's (else chrome-devtools-mcp's)
	id   int
	line string
}

func (p agentPage) String() string {
	if p.pw {
		return fmt.Sprintf("Playwright MCP's tab %d", p.id)
	}
	return fmt.Sprintf("chrome-devtools-mcp's page %d", p.id)
}

// call runs one tool call as the agent and scans its result at once for
// every secret of the rig (and a masked field as long as one). A result
// flagged isError fails t unless mayFail; it reports whether it was one.
func (at *attacker) call(t testing.TB, s *agenttools.Server, tool string, args map[string]any, mayFail bool) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(at.a.ctx, 60*time.Second)
	defer cancel()
	res, err := s.Call(ctx, tool, args, agenttools.CallOptions{})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	raw, _ := json.Marshal(res)
	for _, secret := range at.a.allSecrets() {
		leakscan.Agent(t, secret, "the result of "+tool, raw)
	}
	if res.IsError && !mayFail {
		t.Fatalf("%s failed: %s", tool, at.a.Withheld([]byte(res.Text())))
	}
	return res.Text(), res.IsError
}

// allSecrets are the rig's secrets so far.
func (a *attackRig) allSecrets() [][]byte { return a.Secrets() }

// urlsIn finds the addresses in a tool's text.
var urlsIn = regexp.MustCompile(`(?:https?|chrome-extension)://[^\s)\]"'<>]+`)

// noPromptIn fails t if list (what a tool or CDP listed) names a page on
// 127.0.0.1 that is not the login site there, or does not name that
// login site (whose tab is open the whole time: the list was read).
func (at *attacker) noPromptIn(t testing.TB, what, list string) {
	t.Helper()
	site := false
	for _, u := range urlsIn.FindAllString(list, -1) {
		site = site || strings.HasPrefix(u, at.a.site1.origin+"/")
		if at.a.prompts.IsPrompt(u) {
			t.Errorf("%s lists a loopback page that is not a login site (a prompt page): %s", what, at.a.Withheld([]byte(u)))
		}
	}
	if !site {
		t.Errorf("%s does not list the login site's tab: %s", what, at.a.Withheld([]byte(list)))
	}
}

// pages has both tools list every page they can see, and checks that no
// prompt page is among them.
func (at *attacker) pages(t testing.TB) []agentPage {
	t.Helper()
	var out []agentPage
	tabs, _ := at.call(t, at.tools.pw, "browser_tabs", map[string]any{"action": "list"}, false)
	at.noPromptIn(t, "Playwright MCP (browser_tabs)", tabs)
	for _, m := range regexp.MustCompile(`(?m)^- (\d+): .*$`).FindAllStringSubmatch(tabs, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, agentPage{pw: true, id: n, line: m[0]})
	}
	list, _ := at.call(t, at.tools.cd, "list_pages", map[string]any{}, false)
	at.noPromptIn(t, "chrome-devtools-mcp (list_pages)", list)
	for _, m := range regexp.MustCompile(`(?m)^(\d+): .*$`).FindAllStringSubmatch(list, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, agentPage{id: n, line: m[0]})
	}
	if !slices.ContainsFunc(out, func(p agentPage) bool { return p.pw }) || !slices.ContainsFunc(out, func(p agentPage) bool { return !p.pw }) {
		t.Fatalf("the tools listed no pages: %s / %s", at.a.Withheld([]byte(tabs)), at.a.Withheld([]byte(list)))
	}
	return out
}

// rawCDP lists the browser's targets as a plain CDP client does, over
// the test's own connection (Target.getTargets) and the endpoint's
// /json/list, and checks that no prompt page is among them.
func (at *attacker) rawCDP(t testing.TB) {
	t.Helper()
	infos, err := chromedp.Targets(at.a.bctx)
	if err != nil {
		t.Fatalf("Target.getTargets: %v", err)
	}
	var urls []string
	for _, info := range infos {
		urls = append(urls, info.Type+" "+info.URL)
	}
	at.noPromptIn(t, "CDP's Target.getTargets", strings.Join(urls, "\n"))
	ctx, cancel := context.WithTimeout(at.a.ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, at.a.browserURL()+"/json/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /json/list: %v", err)
	}
	defer resp.Body.Close()
	var list []struct{ Type, URL string }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list) == 0 {
		t.Fatalf("GET /json/list: %d targets, %v", len(list), err)
	}
	urls = urls[:0]
	for _, l := range list {
		urls = append(urls, l.Type+" "+l.URL)
	}
	at.noPromptIn(t, "the DevTools endpoint's /json/list", strings.Join(urls, "\n"))
}

// catchKey is where a tool's listeners keep what they caught, in each
// page's main world.
func catchKey(p agentPage) string {
	if p.pw {
		return "__agentCaughtPW"
	}
	return "__agentCaughtCD"
}

// armJS installs capture-phase listeners for every key and input event,
// on the window and the document, that keep each event's key, data,
// pasted text and the target's value: what an agent would do to catch
// what the person types.
const armJS = `() => {
  const key = %q;
  if (!Array.isArray(window[key])) {
    const caught = [];
    const note = (e) => caught.push([e.type, e.key ?? "", e.data ?? "", e.clipboardData?.getData("text") ?? "",
      typeof e.target?.value === "string" ? e.target.value : ""].join("|"));
    for (const type of ["keydown", "keypress", "keyup", "beforeinput", "input", "textInput", "compositionend", "paste", "change"]) {
      window.addEventListener(type, note, true);
      document.addEventListener(type, note, true);
    }
    Object.defineProperty(window, key, { value: caught });
  }
  return "armed";
}`

// readJS returns everything the listeners caught, as an agent would
// carry it off: "caught=N [...]", or "caught=none" in a document they
// are not in.
const readJS = `() => { const c = window[%q]; return Array.isArray(c) ? "caught=" + c.length + " " + JSON.stringify(c) : "caught=none"; }`

// eval runs js in page p with its tool.
func (at *attacker) eval(t testing.TB, p agentPage, js string, mayFail bool) (string, bool) {
	t.Helper()
	if p.pw {
		at.call(t, at.tools.pw, "browser_tabs", map[string]any{"action": "select", "index": p.id}, false)
		return at.call(t, at.tools.pw, "browser_evaluate", map[string]any{"function": js}, mayFail)
	}
	return at.call(t, at.tools.cd, "evaluate_script", map[string]any{"pageId": p.id, "function": js}, mayFail)
}

// arm installs the listeners in every page.
func (at *attacker) arm(t testing.TB, pages []agentPage) {
	t.Helper()
	for _, p := range pages {
		if out, _ := at.eval(t, p, fmt.Sprintf(armJS, catchKey(p)), false); !strings.Contains(out, "armed") {
			t.Fatalf("%s: the listeners were not installed: %s", p, at.a.Withheld([]byte(out)))
		}
	}
}

// caughtRE reads readJS's answer out of a tool's result.
var caughtRE = regexp.MustCompile(`caught=(none|\d+)`)

// caught reads back what the listeners caught in every page: for each,
// "0" (armed, caught nothing), "none" (not armed: the page's document is
// a new one) or "some" (never the count: that could tell a length).
func (at *attacker) caught(t testing.TB, pages []agentPage) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range pages {
		text, failed := at.eval(t, p, fmt.Sprintf(readJS, catchKey(p)), true)
		m := caughtRE.FindStringSubmatch(text)
		switch {
		case failed || m == nil:
			t.Errorf("%s: reading back the listeners failed: %s", p, at.a.Withheld([]byte(text)))
		case m[1] == "none" || m[1] == "0":
			out[p.String()] = m[1]
		default:
			out[p.String()] = "some"
		}
	}
	return out
}

// What nothingToClick reads in a snapshot: its nodes (Playwright MCP's
// lines carry [ref=…], chrome-devtools-mcp's uid=…), the names of what
// can be clicked, and the words a prompt's buttons would say.
var (
	snapshotNode = regexp.MustCompile(`(?m)^.*(?:\[ref=|uid=).*$`)
	buttonName   = regexp.MustCompile(`(?i)\b(?:button|link|menuitem|checkbox|radio)\b\s*"([^"]*)"`)
	answerWords  = regexp.MustCompile(`(?i)approve|allow|send|fill|confirm|unlock|\buse\b|remember|\bok\b|type instead|cancel|deny`)
)

// nothingToClick snapshots every page with its tool and fails t if any
// offers something that would answer a prompt (Send, Approve, Fill saved,
// Allow, ...) or mentions fillgate at all: there is nothing an agent can
// click for the person.
func (at *attacker) nothingToClick(t testing.TB, pages []agentPage) {
	t.Helper()
	buttons := map[bool]int{} // per tool: the snapshots were read
	for _, p := range pages {
		var snap string
		if p.pw {
			at.call(t, at.tools.pw, "browser_tabs", map[string]any{"action": "select", "index": p.id}, false)
			snap, _ = at.call(t, at.tools.pw, "browser_snapshot", map[string]any{}, false)
		} else {
			snap, _ = at.call(t, at.tools.cd, "take_snapshot", map[string]any{"pageId": p.id}, false)
		}
		for _, node := range snapshotNode.FindAllString(snap, -1) {
			if strings.Contains(strings.ToLower(node), "fillgate") {
				t.Errorf("%s shows something of fillgate's: %s", p, at.a.Withheld([]byte(node)))
			}
			for _, m := range buttonName.FindAllStringSubmatch(node, -1) {
				buttons[p.pw]++
				if answerWords.MatchString(m[1]) {
					t.Errorf("%s offers %s to click", p, at.a.Withheld([]byte(m[1])))
				}
			}
		}
	}
	if buttons[true] == 0 || buttons[false] == 0 {
		t.Errorf("the snapshots show no button at all (the login page's Sign in): %d in Playwright MCP's, %d in chrome-devtools-mcp's",
			buttons[true], buttons[false])
	}
}

// listedTab returns the page of tool pw (or not) that shows tb.
func listedTab(t testing.TB, pages []agentPage, pw bool, tb *tab) agentPage {
	t.Helper()
	for _, p := range pages {
		if p.pw == pw && strings.Contains(p.line, "s="+tb.token) {
			return p
		}
	}
	t.Fatalf("the tools do not list the login tab")
	return agentPage{}
}

// typeOwn has the agent type its own value into the focused field of
// the login page with both tools (Playwright MCP's browser_type into the
// field, chrome-devtools-mcp's type_text at the focus), as if it could
// answer for the person there.
func (at *attacker) typeOwn(t testing.TB, pages []agentPage, tb *tab, value string) {
	t.Helper()
	pw := listedTab(t, pages, true, tb)
	at.call(t, at.tools.pw, "browser_tabs", map[string]any{"action": "select", "index": pw.id}, false)
	at.call(t, at.tools.pw, "browser_type", map[string]any{"target": "#pw", "element": "the password field", "text": value}, false)
	cd := listedTab(t, pages, false, tb)
	at.call(t, at.tools.cd, "type_text", map[string]any{"pageId": cd.id, "text": value}, false)
}

// readAfter is what the agent reads of tb's page right after a result:
// a DOM read (the field's value and the whole document) and Playwright
// MCP's accessibility snapshot, and chrome-devtools-mcp's. Each result is
// scanned for every secret; the page may still be navigating, so a read
// that fails there is no failure.
func (at *attacker) readAfter(t testing.TB, tb *tab) {
	t.Helper()
	pages := at.pages(t)
	pw := listedTab(t, pages, true, tb)
	at.call(t, at.tools.pw, "browser_tabs", map[string]any{"action": "select", "index": pw.id}, false)
	at.call(t, at.tools.pw, "browser_evaluate", map[string]any{"function": `() => JSON.stringify({ field: document.getElementById("pw")?.value ?? null,
  inputs: Array.from(document.querySelectorAll("input"), (i) => i.value), html: document.documentElement.outerHTML })`}, true)
	at.call(t, at.tools.pw, "browser_snapshot", map[string]any{}, true)
	cd := listedTab(t, pages, false, tb)
	at.call(t, at.tools.cd, "take_snapshot", map[string]any{"pageId": cd.id}, true)
}

// scan scans all the tools wrote and printed since m for every secret.
func (at *attacker) scan(t testing.TB, m toolsMark) {
	t.Helper()
	for _, s := range at.a.allSecrets() {
		at.tools.scan(t, s, m)
		at.a.scanFillgate(t, s)
	}
}

// fillgateMCP starts `fillgate mcp` under the tools' driver as an agent's
// MCP client would (as mcp_test.go's does, with its stderr under the
// rig's root, which the final scan reads).
func (a *attackRig) fillgateMCP(t testing.TB, d *agenttools.Driver) *agenttools.Server {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range a.env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	s, err := d.Connect(ctx, "fillgate-mcp", agenttools.Spec{Command: fillgateBin, Args: []string{"mcp"}, Env: vars,
		Stderr: filepath.Join(a.root, "fillgate-mcp.stderr")})
	if err != nil {
		t.Fatal(err)
	}
	if tools, err := s.ListTools(ctx); err != nil || len(tools) != 1 || tools[0].Name != "request_secret" {
		t.Fatalf("fillgate mcp lists %+v, %v", tools, err)
	}
	return s
}
