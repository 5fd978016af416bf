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
// service), the agents' own network tools, attached the whole time, show
// the value nowhere: Playwright MCP's browser_network_requests (static
// resources included) and the details of each request it lists, and
// chrome-devtools-mcp's list_network_requests (with the requests it keeps
// over the last navigations) and get_network_request of each.
func TestLoginRequestNotInTheAgentsNetworkTools(t *testing.T) {
	t.Parallel()
	r, tools := newToolsRig(t, 4*time.Minute)
	secret := r.secret(t)
	tb := r.open(t, r.site1, "/login")
	tb.focus("pw")
	m := tools.mark(t)
	run, p := r.ask(t, "--service", svc, "--via", fill.ViaExtension)
	p.send(secret)
	if res := run.result(t); res.Status != fill.StatusOK || res.Submitted == nil || !*res.Submitted {
		t.Fatalf("result %+v; want ok and submitted", res)
	}

	tabs := tools.call(t, tools.pw, secret, "browser_tabs", map[string]any{"action": "list"})
	i, ok := listIndex(tabs, `(?m)^- (\d+): .*`, "s="+tb.token)
	if !ok {
		t.Fatalf("Playwright MCP does not list the tab: %s", r.withheld([]byte(tabs)))
	}
	tools.call(t, tools.pw, secret, "browser_tabs", map[string]any{"action": "select", "index": i})
	list := tools.call(t, tools.pw, secret, "browser_network_requests", map[string]any{"static": true})
	for _, m := range regexp.MustCompile(`(?m)^(\d+)\. `).FindAllStringSubmatch(list, -1) {
		n, _ := strconv.Atoi(m[1])
		tools.call(t, tools.pw, secret, "browser_network_request", map[string]any{"index": n})
	}

	pages := tools.call(t, tools.cd, secret, "list_pages", map[string]any{})
	id, ok := listIndex(pages, `(?m)^(\d+): .*`, "s="+tb.token)
	if !ok {
		t.Fatalf("chrome-devtools-mcp does not list the page: %s", r.withheld([]byte(pages)))
	}
	reqs := tools.call(t, tools.cd, secret, "list_network_requests", map[string]any{"pageId": id, "includePreservedRequests": true})
	for _, m := range regexp.MustCompile(`reqid=(\d+)`).FindAllStringSubmatch(reqs, -1) {
		n, _ := strconv.Atoi(m[1])
		tools.call(t, tools.cd, secret, "get_network_request", map[string]any{"pageId": id, "reqid": n})
	}
	tools.scan(t, secret, m)
	r.scanFillgate(t, secret)
}
