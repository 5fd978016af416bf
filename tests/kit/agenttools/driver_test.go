//go:build linux

package agenttools

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// TestToolsSeeAFilledField is the control for tests/suites/agents: with a
// password and a one-time code typed into a page (by the test, as a
// person would), Playwright MCP's snapshot shows both, and its snapshot
// files hold them; chrome-devtools-mcp shows the code and the password's
// length. So a test that finds the value in none of their results or
// files can fail.
func TestToolsSeeAFilledField(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>control</title><h1>Sign in</h1>
<input id=pw type=password autocomplete=current-password><input id=otp autocomplete=one-time-code><button>Go</button>`)
	}))
	defer srv.Close()
	ch := browser.StartChromium(t, ctx, browser.ChromiumOptions{})
	tab := browser.NewTab(t, ch.Attach(t, ctx), srv.URL+"/")
	password, code := leakscan.NewSecret(t), []byte("493817")
	for id, v := range map[string][]byte{"pw": password, "otp": code} {
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.getElementById("`+id+`").focus() ?? true`)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(tab, input.InsertText, input.InsertTextParams{Text: string(v)}); err != nil {
			t.Fatal("type into the page failed")
		}
	}

	node, err := Node()
	if err != nil {
		t.Fatal(err)
	}
	d := Start(t, nil)
	pwWS, err := NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cdWS, err := NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(ch.Port)
	pw, err := d.Connect(ctx, "playwright-mcp", PlaywrightMCP(node, url, pwWS))
	if err != nil {
		t.Fatal(err)
	}
	cd, err := d.Connect(ctx, "chrome-devtools-mcp", ChromeDevToolsMCP(node, url, cdWS))
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[*Server][]string{
		pw: {"browser_snapshot", "browser_hover", "browser_wait_for", "browser_tabs"},
		cd: {"take_snapshot", "take_screenshot", "list_pages"},
	} {
		tools, err := s.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(tools))
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
		for _, w := range want {
			if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+w+" ") {
				t.Errorf("%s has no tool %s", s.name, w)
			}
		}
	}

	text := func(s *Server, tool string, args map[string]any) string {
		t.Helper()
		res, err := s.Call(ctx, tool, args, CallOptions{})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v (isError %v)", tool, err, res != nil && res.IsError)
		}
		return res.Text()
	}
	tabs := text(pw, "browser_tabs", map[string]any{"action": "list"})
	m := regexp.MustCompile(`(?m)^- (\d+): .*` + regexp.QuoteMeta(srv.URL)).FindStringSubmatch(tabs)
	if m == nil {
		t.Fatalf("Playwright MCP does not list the page")
	}
	i, _ := strconv.Atoi(m[1])
	text(pw, "browser_tabs", map[string]any{"action": "select", "index": i})
	snap := text(pw, "browser_snapshot", map[string]any{})
	if !leakscan.Contains([]byte(snap), password) || !leakscan.Contains([]byte(snap), code) {
		t.Errorf("Playwright MCP's snapshot does not show the filled fields: the agent-tool tests could not fail")
	}
	ref := regexp.MustCompile(`\[ref=(e\d+)\]`).FindAllStringSubmatch(snap, -1)
	if len(ref) == 0 {
		t.Fatal("no element to hover")
	}
	text(pw, "browser_hover", map[string]any{"target": ref[len(ref)-1][1]})
	saved := 0
	entries, _ := os.ReadDir(pwWS.Output)
	for _, e := range entries {
		if data, err := os.ReadFile(filepath.Join(pwWS.Output, e.Name())); err == nil && strings.HasSuffix(e.Name(), ".yml") && leakscan.Contains(data, password) {
			saved++
		}
	}
	if saved == 0 {
		t.Errorf("browser_hover saved no snapshot holding the value to its output folder")
	}

	pages := text(cd, "list_pages", map[string]any{})
	m = regexp.MustCompile(`(?m)^(\d+): .*` + regexp.QuoteMeta(srv.URL)).FindStringSubmatch(pages)
	if m == nil {
		t.Fatalf("chrome-devtools-mcp does not list the page")
	}
	id, _ := strconv.Atoi(m[1])
	snap = text(cd, "take_snapshot", map[string]any{"pageId": id})
	if !leakscan.MaskedLength([]byte(snap), password) || !leakscan.Contains([]byte(snap), code) {
		t.Errorf("chrome-devtools-mcp's snapshot shows neither the password's length nor the code")
	}

	// The servers die with the driver.
	pids := []int{pw.PID, cd.PID}
	d.Stop()
	for _, pid := range pids {
		if pid == 0 {
			t.Errorf("no pid for a server")
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
			t.Errorf("server pid %d outlived the driver", pid)
		}
	}
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] == 'Z'
}
