//go:build linux

package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/tests/kit/agenttools"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// agentTools are the agent's own browser tools, attached to the rig's
// browser for the whole test as an agent's would be: Playwright MCP over
// --cdp-endpoint and chrome-devtools-mcp over --browserUrl, each with a
// workspace (HOME, working dir, output folder) under the rig's root.
type agentTools struct {
	r      *rig
	d      *agenttools.Driver
	pw, cd *agenttools.Server
	pwWS   agenttools.Workspace
	cdWS   agenttools.Workspace
}

// newToolsRig is newRig with basePolicy and both tools attached to its
// browser, for a test that may take d.
func newToolsRig(t *testing.T, d time.Duration) (*rig, *agentTools) {
	t.Helper()
	r := newRig(t, testContext(t, d), basePolicy)
	return r, r.attachTools(t)
}

// attachTools starts the driver and both tools.
func (r *rig) attachTools(t testing.TB) *agentTools {
	t.Helper()
	node, err := agenttools.Node()
	if err != nil {
		t.Fatal(err)
	}
	a := &agentTools{r: r, d: agenttools.Start(t, nil)}
	if a.pwWS, err = agenttools.NewWorkspace(filepath.Join(r.root, "playwright-mcp")); err != nil {
		t.Fatal(err)
	}
	if a.cdWS, err = agenttools.NewWorkspace(filepath.Join(r.root, "chrome-devtools-mcp")); err != nil {
		t.Fatal(err)
	}
	chromium, err := browser.ChromiumBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(r.ctx, 60*time.Second)
	defer cancel()
	pwSpec := agenttools.PlaywrightMCP(node, r.browserURL(), a.pwWS)
	pwSpec.Args = append(pwSpec.Args, "--executable-path", chromium) // never a browser of its own
	if a.pw, err = a.d.Connect(ctx, "playwright-mcp", pwSpec); err != nil {
		t.Fatal(err)
	}
	if a.cd, err = a.d.Connect(ctx, "chrome-devtools-mcp", agenttools.ChromeDevToolsMCP(node, r.browserURL(), a.cdWS)); err != nil {
		t.Fatal(err)
	}
	return a
}

// call runs one tool call, fails the test if it errs, and scans its result
// for secret at once. It returns the result's text.
func (a *agentTools) call(t testing.TB, s *agenttools.Server, secret []byte, tool string, args map[string]any) string {
	t.Helper()
	text, failed := a.try(t, s, secret, tool, args)
	if failed {
		t.Fatalf("%s failed: %s", tool, a.r.Withheld([]byte(text)))
	}
	return text
}

// try is call for a call that may fail: it returns the result's text and
// whether the tool flagged it an error.
func (a *agentTools) try(t testing.TB, s *agenttools.Server, secret []byte, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(a.r.ctx, 60*time.Second)
	defer cancel()
	res, err := s.Call(ctx, tool, args, agenttools.CallOptions{})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	raw, _ := json.Marshal(res)
	leakscan.Agent(t, secret, fmt.Sprintf("the result of %s", tool), raw)
	return res.Text(), res.IsError
}

// tabs is Playwright MCP's list of tabs (browser_tabs list). A page that
// closes while the tool reads the tabs' titles fails the whole listing
// ("Target page, context or browser has been closed"): the prompt page,
// which fillgate closes just before the result of a fill comes back, is
// one. Listing again once that page is gone is what an agent does, and
// what this does, once.
func (a *agentTools) tabs(t testing.TB, secret []byte) string {
	t.Helper()
	args := map[string]any{"action": "list"}
	text, failed := a.try(t, a.pw, secret, "browser_tabs", args)
	if failed && strings.Contains(text, "has been closed") {
		t.Logf("Playwright MCP's browser_tabs failed while a page closed; listing again: %s", a.r.Withheld([]byte(text)))
		time.Sleep(500 * time.Millisecond)
		text, failed = a.try(t, a.pw, secret, "browser_tabs", args)
	}
	if failed {
		t.Fatalf("browser_tabs failed: %s", a.r.Withheld([]byte(text)))
	}
	return text
}

// toolsMark is where a scenario began: how much the driver had printed
// and which files the tools had written.
type toolsMark struct {
	out   int
	files map[string]bool
}

// mark notes where a scenario begins, so its scans can tell its own
// results and files (a masked field as long as this scenario's secret is
// a leak of it; as long as an earlier one's, of that one).
func (a *agentTools) mark(t testing.TB) toolsMark {
	t.Helper()
	m := toolsMark{out: len(a.d.Output()), files: map[string]bool{}}
	for _, f := range files(t, a.pwWS.Root, a.cdWS.Root) {
		m.files[f] = true
	}
	return m
}

// readPage has both tools read tb's page as an agent would after a login,
// and scans every result and every file they wrote for secret: Playwright
// MCP selects the tab, takes a snapshot, hovers an element and waits for
// text (the two save their snapshots as files in its output folder) and
// takes a screenshot; chrome-devtools-mcp takes a snapshot (returned, and
// saved to a file) and a screenshot saved to a file.
func (a *agentTools) readPage(t testing.TB, tb *tab, secret []byte, m toolsMark) {
	t.Helper()
	mark := "s=" + tb.token

	tabs := a.tabs(t, secret)
	i, ok := listIndex(tabs, `(?m)^- (\d+): .*`, mark)
	if !ok {
		t.Fatalf("Playwright MCP does not list the tab: %s", a.r.Withheld([]byte(tabs)))
	}
	a.call(t, a.pw, secret, "browser_tabs", map[string]any{"action": "select", "index": i})
	snap := a.call(t, a.pw, secret, "browser_snapshot", map[string]any{})
	// Refs are e<n>, or f<frame>e<n> in a page that navigated.
	refs := regexp.MustCompile(`\[ref=((?:f\d+)?e\d+)\]`).FindAllStringSubmatch(snap, -1)
	if len(refs) == 0 {
		t.Fatalf("the snapshot has no element to hover: %s", a.r.Withheld([]byte(snap)))
	}
	a.call(t, a.pw, secret, "browser_hover", map[string]any{"target": refs[len(refs)-1][1], "element": "the last element"})
	a.call(t, a.pw, secret, "browser_wait_for", map[string]any{"text": "page " + tb.token})
	a.call(t, a.pw, secret, "browser_take_screenshot", map[string]any{"scale": "css", "type": "png"})

	pages := a.call(t, a.cd, secret, "list_pages", map[string]any{})
	id, ok := listIndex(pages, `(?m)^(\d+): .*`, mark)
	if !ok {
		t.Fatalf("chrome-devtools-mcp does not list the page: %s", a.r.Withheld([]byte(pages)))
	}
	a.call(t, a.cd, secret, "take_snapshot", map[string]any{"pageId": id})
	a.call(t, a.cd, secret, "take_snapshot", map[string]any{"pageId": id, "filePath": filepath.Join(a.cdWS.Output, "snapshot-"+tb.token+".txt")})
	a.call(t, a.cd, secret, "take_screenshot", map[string]any{"pageId": id, "filePath": filepath.Join(a.cdWS.Output, "screenshot-"+tb.token+".png")})

	saved := map[string]int{}
	for _, f := range a.newFiles(t, m) {
		switch {
		case strings.HasPrefix(f, a.pwWS.Output) && strings.HasSuffix(f, ".yml"):
			saved["pw"]++
		case strings.HasPrefix(f, a.cdWS.Output):
			saved["cd"]++
		}
	}
	if saved["pw"] < 2 || saved["cd"] < 2 {
		t.Errorf("the tools saved %d snapshots (Playwright MCP) and %d files (chrome-devtools-mcp); want at least 2 each", saved["pw"], saved["cd"])
	}
	a.scan(t, secret, m)
}

// scan scans all the tools wrote and printed: the driver's output (every
// result) and every file in their workspaces (their output folders, HOME,
// stderr). What is new since m is also checked for a masked field as long
// as secret; what came before, for secret itself.
func (a *agentTools) scan(t testing.TB, secret []byte, m toolsMark) {
	t.Helper()
	out := a.d.Output()
	at := min(m.out, len(out))
	leakscan.Bytes(t, secret, "the agent tools' earlier results", out[:at])
	leakscan.Agent(t, secret, "the agent tools' results", out[at:])
	leakscan.Bytes(t, secret, "the agent-tools driver's stderr", a.d.Stderr())
	fresh := map[string]bool{}
	for _, f := range a.newFiles(t, m) {
		fresh[f] = true
	}
	all := files(t, a.pwWS.Root, a.cdWS.Root)
	if len(all) == 0 {
		t.Errorf("the agent tools wrote no files")
	}
	for _, f := range all {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("read %s: %v", f, err)
			continue
		}
		if fresh[f] {
			leakscan.Agent(t, secret, f, data)
		} else {
			leakscan.Bytes(t, secret, f, data)
		}
	}
}

// newFiles lists the files the tools wrote since m (or changed: an
// appended log is scanned whole).
func (a *agentTools) newFiles(t testing.TB, m toolsMark) []string {
	t.Helper()
	var out []string
	for _, f := range files(t, a.pwWS.Root, a.cdWS.Root) {
		if !m.files[f] || strings.HasSuffix(f, ".log") {
			out = append(out, f)
		}
	}
	return out
}

// files lists the regular files under dirs.
func files(t testing.TB, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				out = append(out, path)
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Errorf("list %s: %v", dir, err)
		}
	}
	return out
}

// listIndex finds the line of a tool's list (tabs, pages) that holds mark
// and returns the number the line pattern captures.
func listIndex(list, pattern, mark string) (int, bool) {
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(list, -1) {
		if strings.Contains(m[0], mark) {
			n, err := strconv.Atoi(m[1])
			return n, err == nil
		}
	}
	return 0, false
}
