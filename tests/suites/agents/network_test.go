//go:build linux

package agents

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// TestLoginRequestNotInTheAgentsNetworkTools: after a fill that submitted
// a classic POST login (the request that carries the value to the
// service), the agents' own network tools, attached the whole time and
// knowing the tab before the fill, show the value nowhere: Playwright
// MCP's browser_network_requests (static resources included) and the
// details of each request it lists, and chrome-devtools-mcp's
// list_network_requests (with the requests it keeps over the last
// navigations) and get_network_request of each. The browser is driven (it
// has a debugging port), so under the person's default the login is
// posted in fillgate's clean room: Playwright MCP lists no POST of the
// login at all, and does list the welcome page the agent's tab was sent
// to where the login ended. A control where the person lets fillgate type
// into the page (driven = "in-page") shows that it does list the login's
// POST when the agent's browser makes it, so that check can fail.
func TestLoginRequestNotInTheAgentsNetworkTools(t *testing.T) {
	t.Parallel()
	r, tools := newToolsRig(t, 4*time.Minute)
	for _, c := range []struct {
		name, policy string
		cleanRoom    bool
	}{
		{"clean room", basePolicy, true},
		{"control: in the page, Playwright MCP lists the login's POST", inPagePolicy, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r.writePolicy(c.policy)
			defer r.writePolicy(basePolicy)
			secret := r.Secret(t)
			tb := r.open(t, r.site1, "/login")
			tb.focus("pw")
			m := tools.mark(t)
			// The agent's tools know the tab before the fill, as an
			// agent's that opened it would.
			tabs := tools.call(t, tools.pw, secret, "browser_tabs", map[string]any{"action": "list"})
			i, ok := listIndex(tabs, `(?m)^- (\d+): .*`, "s="+tb.token)
			if !ok {
				t.Fatalf("Playwright MCP does not list the tab: %s", r.Withheld([]byte(tabs)))
			}
			tools.call(t, tools.pw, secret, "browser_tabs", map[string]any{"action": "select", "index": i})
			pages := tools.call(t, tools.cd, secret, "list_pages", map[string]any{})
			id, ok := listIndex(pages, `(?m)^(\d+): .*`, "s="+tb.token)
			if !ok {
				t.Fatalf("chrome-devtools-mcp does not list the page: %s", r.Withheld([]byte(pages)))
			}
			tb.front()
			tb.focus("pw")
			run, p := r.ask(t, "--service", svc, "--via", fill.ViaExtension)
			p.send(secret)
			res := run.result(t)
			if res.Status != fill.StatusOK || res.Submitted == nil || !*res.Submitted {
				t.Fatalf("result %+v; want ok and submitted", res)
			}
			if handed := res.HandedOver != nil && *res.HandedOver; handed != c.cleanRoom {
				t.Fatalf("result %+v; want handed over from the clean room: %v", res, c.cleanRoom)
			}
			welcome(t, tb)

			tabs = tools.tabs(t, secret)
			if i, ok = listIndex(tabs, `(?m)^- (\d+): .*`, "s="+tb.token); !ok {
				t.Fatalf("Playwright MCP does not list the tab: %s", r.Withheld([]byte(tabs)))
			}
			tools.call(t, tools.pw, secret, "browser_tabs", map[string]any{"action": "select", "index": i})
			list := tools.call(t, tools.pw, secret, "browser_network_requests", map[string]any{"static": true})
			for _, m := range regexp.MustCompile(`(?m)^(\d+)\. `).FindAllStringSubmatch(list, -1) {
				n, _ := strconv.Atoi(m[1])
				tools.call(t, tools.pw, secret, "browser_network_request", map[string]any{"index": n})
			}

			reqs := tools.call(t, tools.cd, secret, "list_network_requests", map[string]any{"pageId": id, "includePreservedRequests": true})
			for _, m := range regexp.MustCompile(`reqid=(\d+)`).FindAllStringSubmatch(reqs, -1) {
				n, _ := strconv.Atoi(m[1])
				tools.call(t, tools.cd, secret, "get_network_request", map[string]any{"pageId": id, "reqid": n})
			}
			// What Playwright MCP lists of the login: its POST in the
			// agent's browser only in the page; after the clean room, the
			// welcome page the agent's tab was sent to. (chrome-devtools-
			// mcp's list of a tab's navigations is not reliable: here it
			// lists none of them, now and then; what it lists is scanned.)
			post := regexp.MustCompile(`(?m)^\d+\. \[POST\] \S*/session\?s=` + tb.token)
			welcomed := regexp.MustCompile(`(?m)^\d+\. \[GET\] \S*/welcome\?s=` + tb.token)
			switch {
			case c.cleanRoom && post.MatchString(list):
				t.Errorf("Playwright MCP lists a POST of the login: the agent's browser posted it, not the clean room")
			case c.cleanRoom && !welcomed.MatchString(list):
				t.Errorf("Playwright MCP does not list the welcome page the agent's tab was sent to, so its list proves nothing: %s", r.Withheld([]byte(list)))
			case !c.cleanRoom && !post.MatchString(list):
				t.Errorf("in the page, Playwright MCP does not list the login's POST, so the clean room's check of it proves nothing: %s", r.Withheld([]byte(list)))
			}
			tools.scan(t, secret, m)
			r.scanFillgate(t, secret)
		})
	}
}
