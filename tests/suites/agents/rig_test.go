//go:build linux

package agents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/envlist"
	"github.com/fillgate/fillgate/tests/kit/fgenv"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/hostwait"
	"github.com/fillgate/fillgate/tests/kit/ledger"
	"github.com/fillgate/fillgate/tests/kit/loopback"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/promptwatch"
)

// basePolicy is the policy every rig starts from: many requests from one
// agent (this test) in a minute, no cool-down between scenarios, and the
// CDP path's prompt as a tab of the browser, which the test answers there
// (prompt = "browser": the observer tests answer the loopback page; the
// attacker tests use the person's default, "auto"). Every check on the
// page and the field stays as it is.
const basePolicy = `# fillgate agent-tool tests
rate_limit = "1000/1m"
no_response_cooldown = "0s"
prompt_opener = "cdp-tab"
prompt = "browser"
`

// rig is one fillgate set-up in a temp root: HOME and the XDG dirs, the
// policy, what `fillgate install` wrote, one headless Chromium with the
// extension and a debugging port, the host it started, and two login
// sites on loopback. The browser, the host, the agent (fillgate fill and
// fillgate mcp) and the agent tools all share its environment.
type rig struct {
	t        testing.TB
	ctx      context.Context
	root     string
	env      []string
	runDir   string // agent.sock and hosts/
	stateDir string // fillgate.log, audit.jsonl
	chrome   *browser.Chromium
	bctx     context.Context // the test's own CDP connection: it plays the user
	site1    *site           // http://127.0.0.1:port
	site2    *site           // http://127.0.0.2:port, another site
	host     agentsock.HostStatus
	prompts  *promptwatch.Watch
	// Ledger holds every scenario's secret and everything fillgate
	// printed, for the final scan.
	ledger.Ledger
}

// newRig starts everything; it all stops when the test ends, and then
// every file under the root, the browser's output and everything fillgate
// printed are scanned for every secret of the rig.
func newRig(t *testing.T, ctx context.Context, policy string) *rig {
	t.Helper()
	r := newBareRig(t, ctx, "fgag-")
	r.writePolicy(policy)
	r.start(serve(t, "127.0.0.1"), serve(t, "127.0.0.2"))
	return r
}

// newBareRig makes the temp root and environment (fgenv), whose prefix
// names the suite, and registers the final scan: no browser yet.
func newBareRig(t *testing.T, ctx context.Context, prefix string) *rig {
	t.Helper()
	root := fgenv.New(t, prefix)
	r := &rig{t: t, ctx: ctx, root: root.Dir, env: root.Env, runDir: root.RunDir, stateDir: root.StateDir}
	// Registered before the browser starts, so it runs after it stopped
	// (and flushed its profile).
	t.Cleanup(r.finalScan)
	return r
}

// start installs fillgate for a Chromium profile under the root as a
// person would, serves the login sites site1 (on 127.0.0.1) and site2,
// starts the browser with the extension and a debugging port, and waits
// for the host it starts.
func (r *rig) start(site1, site2 *site) {
	r.t.Helper()
	profile := filepath.Join(r.root, "profile")
	ext := r.install(profile)
	r.site1, r.site2 = site1, site2
	r.chrome = browser.StartChromium(r.t, r.ctx, browser.ChromiumOptions{UserDataDir: profile, Extensions: []string{ext}, Env: r.env})
	r.env = append(r.env, "FILLGATE_CDP_URL="+r.browserURL())
	r.bctx = r.chrome.Attach(r.t, r.ctx)
	r.prompts = promptwatch.CDP(r.t, r.bctx, promptwatch.OnLoopbackBut(r.site1.origin))
	r.host = r.waitHost()
}

// getenv looks a variable up in the rig's environment.
func (r *rig) getenv(key string) string { return envlist.Get(r.env, key) }

// browserURL is the browser's CDP endpoint in its http:// form.
func (r *rig) browserURL() string { return fmt.Sprintf("http://127.0.0.1:%d", r.chrome.Port) }

// writePolicy writes fillgate's policy file, which must be valid (a file
// fillgate refuses would make every request a refusal).
func (r *rig) writePolicy(text string) { r.t.Helper(); fgenv.WritePolicy(r.t, r.env, text) }

// install runs `fillgate install --browser chromium --user-data-dir
// profile --json` as a person would and returns the unpacked extension's
// directory. The host manifest it wrote is what the browser starts the
// host from.
func (r *rig) install(profile string) string {
	r.t.Helper()
	out, code := r.cli("install", "--json", "--browser", "chromium", "--user-data-dir", profile)
	return fgrun.Installed(r.t, out, code, profile)
}

// cli runs fillgate with args in the rig's environment and returns its
// stdout and exit code.
func (r *rig) cli(args ...string) ([]byte, int) {
	r.t.Helper()
	cmd := exec.CommandContext(r.ctx, fillgateBin, args...)
	cmd.Env = r.env
	out, errOut, code := fgrun.Command(r.t, cmd)
	r.Keep(out, errOut)
	return out, code
}

// waitHost waits until the host runs with the extension connected.
func (r *rig) waitHost() agentsock.HostStatus {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 60*time.Second)
	defer cancel()
	hs, err := hostwait.Until(ctx, r.runDir, hostwait.One(hostwait.Connected))
	if err != nil {
		r.t.Fatalf("no host with the extension connected: %v", err)
	}
	if hs[0].Caller != manifest.ExtensionOrigin || hs[0].Extension.Paused {
		r.t.Fatalf("host status %+v", hs[0])
	}
	return hs[0]
}

// finalScan runs after the browser stopped: every file under the root
// (the profile, HOME, the XDG dirs, the agent tools' folders), the
// browser's output and everything fillgate printed, for every secret.
func (r *rig) finalScan() {
	more := map[string][]byte{}
	if r.chrome != nil {
		more["the browser's output"] = []byte(r.chrome.Output())
	}
	r.Scan(r.t, r.root, more)
}

// lastAudit is the audit log's newest entry.
func (r *rig) lastAudit(t testing.TB) fill.AuditEntry { return fgenv.LastAudit(t, r.stateDir) }

// scanFillgate scans fillgate's own files (its log and the audit log) for
// secret.
func (r *rig) scanFillgate(t testing.TB, secret []byte) { fgenv.ScanLogs(t, r.stateDir, secret) }

// fillRun is one `fillgate fill --json` run as the agent.
type fillRun struct {
	r *rig
	*fgrun.Run
}

// fill starts `fillgate fill --json args...` in the rig's environment.
func (r *rig) fill(t testing.TB, args ...string) *fillRun {
	t.Helper()
	cmd := exec.CommandContext(r.ctx, fillgateBin, append([]string{"fill", "--json"}, args...)...)
	cmd.Env = r.env
	cmd.WaitDelay = 5 * time.Second
	return &fillRun{r: r, Run: fgrun.Start(t, cmd)}
}

// result waits for the run and returns its one JSON result.
func (f *fillRun) result(t testing.TB) fill.Result {
	t.Helper()
	return f.Checked(t, f.r.ctx, &f.r.Ledger)
}

// site is a login site on one loopback address. Its forms post to it and
// it answers with a welcome page, so a submitted login navigates away.
type site struct {
	origin string
}

// serve starts a site on ip until the test ends.
func serve(t testing.TB, ip string) *site {
	t.Helper()
	return &site{origin: loopback.Start(t, ip, pages())}
}

// pages are the login pages. Every URL carries s=TOKEN, a mark of the
// scenario that the page shows ("page TOKEN") and keeps when the login
// navigates, so the agent tools can find the scenario's tab.
func pages() http.Handler {
	mux := http.NewServeMux()
	write := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>%s</title>
<style>body { margin: 20px; font: 16px sans-serif; } input { display: block; margin: 8px 0; width: 220px; height: 30px; }</style>
</head><body>%s</body></html>`, title, body)
	}
	mark := func(r *http.Request) string {
		s := r.URL.Query().Get("s")
		if strings.Trim(s, "0123456789abcdef") != "" || len(s) > 32 {
			return "bad"
		}
		return s
	}
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		s := mark(r)
		write(w, "Sign in "+s, `<h1>Sign in</h1><p>page `+s+`</p>
<form id=login method=post action="/session?s=`+s+`">
<input id=user name=user autocomplete=username value="alice">
<input id=pw name=pw type=password autocomplete=current-password>
<button id=go>Sign in</button></form>`)
	})
	mux.HandleFunc("GET /otp", func(w http.ResponseWriter, r *http.Request) {
		s := mark(r)
		write(w, "Verify "+s, `<h1>Two-step verification</h1><p>page `+s+`</p>
<form id=verify method=post action="/verify?s=`+s+`">
<input id=otp name=otp autocomplete=one-time-code inputmode=numeric>
<button id=go>Verify</button></form>`)
	})
	mux.HandleFunc("GET /other", func(w http.ResponseWriter, r *http.Request) {
		s := mark(r)
		write(w, "Elsewhere "+s, `<h1>Another page</h1><p>page `+s+`</p>`)
	})
	// A login lands on the welcome page; the value is read by nothing.
	for _, p := range []string{"POST /session", "POST /verify"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/welcome?s="+mark(r), http.StatusSeeOther)
		})
	}
	mux.HandleFunc("GET /welcome", func(w http.ResponseWriter, r *http.Request) {
		s := mark(r)
		write(w, "Welcome "+s, `<h1>Welcome</h1><p>page `+s+`</p>`)
	})
	return mux
}

// tab is a page the user has open, driven over the test's own CDP
// connection.
type tab struct {
	t     testing.TB
	ctx   context.Context
	id    target.ID
	url   string
	token string // the scenario's mark in the URL
	// opened is when the test opened it (openURL).
	opened time.Time
}

// open opens path?s=TOKEN of s in a new window, in front.
func (r *rig) open(t testing.TB, s *site, path string) *tab { return r.openTab(t, s, path, true) }

// openBeside opens path?s=TOKEN of s in a new tab of the window in front.
func (r *rig) openBeside(t testing.TB, s *site, path string) *tab {
	return r.openTab(t, s, path, false)
}

// openTab opens a tab as the user would and brings it to the front. When
// the test ends the tab is left open on a blank page (browser.OpenTab).
func (r *rig) openTab(t testing.TB, s *site, path string, newWindow bool) *tab {
	t.Helper()
	token := randomHex(t)
	url := s.origin + path + "?s=" + token
	ctx, id := browser.OpenTab(t, r.bctx, url, newWindow)
	return &tab{t: t, ctx: ctx, id: id, url: url, token: token}
}

// focus focuses the element with id, as a click into it would.
func (tb *tab) focus(id string) { tb.t.Helper(); browser.Focus(tb.t, tb.ctx, id) }

// front brings the tab to the front of its window.
func (tb *tab) front() { tb.t.Helper(); browser.Front(tb.t, tb.ctx) }

// holdsNowhere reports whether, once the page has loaded, no input of it
// holds secret and its text does not show it. The comparison runs in the
// page; only a boolean comes back.
func (tb *tab) holdsNowhere(secret []byte) bool {
	tb.t.Helper()
	const fn = `function (v) {
  const inputs = Array.from(document.querySelectorAll("input, textarea"));
  return !inputs.some((i) => i.value === v || i.value.includes(v)) && !document.documentElement.outerHTML.includes(v) &&
    !(document.body?.innerText ?? "").includes(v);
}`
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	// The page may be between two documents (a login navigating).
	var nowhere bool
	if poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		var err error
		nowhere, err = callWith(ctx, fn, string(secret))
		return err == nil, err
	}) != nil {
		tb.t.Fatalf("compare in the page failed")
	}
	return nowhere
}

// holds reports whether the element id holds exactly secret.
func (tb *tab) holds(id string, secret []byte) bool {
	tb.t.Helper()
	ok, err := callWith(tb.ctx, `function (id, v) { const el = document.getElementById(id); return !!el && el.value === v; }`, id, string(secret))
	if err != nil {
		tb.t.Fatalf("compare in the page failed")
	}
	return ok
}

// callWith calls the function declaration fn with args on the page's
// window, once the document has loaded, and returns its boolean result.
// An error never quotes the arguments.
func callWith(ctx context.Context, fn string, args ...any) (bool, error) {
	ready, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.readyState === "complete"`))
	if err != nil || !ready {
		return false, errors.New("the page is not loaded")
	}
	win, err := chromedp.Run(ctx, chromedp.Evaluate[*runtime.RemoteObject]("window"))
	if err != nil {
		return false, errors.New("the page's window")
	}
	ok, err := chromedp.Run(ctx, chromedp.CallFunctionOn[bool](fn, func(p *runtime.CallFunctionOnParams) {
		p.ObjectID = win.ObjectID
	}, args...))
	if err != nil {
		return false, errors.New("the call failed")
	}
	return ok, nil
}

// prompt is an open prompt page, as the human sees it.
type prompt struct {
	t   testing.TB
	id  string // its window in the prompt watch
	url string
	ctx context.Context
}

// ask starts `fillgate fill --json args...` and waits for the prompt it
// opens.
func (r *rig) ask(t testing.TB, args ...string) (*fillRun, *prompt) {
	t.Helper()
	n := r.prompts.Count()
	run := r.fill(t, args...)
	return run, r.awaitPrompt(t, n)
}

// awaitPrompt waits for prompt number n to open and be ready for typing
// (promptwatch.Ready), in front, its value field focused.
func (r *rig) awaitPrompt(t testing.TB, n int) *prompt {
	t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	id, pctx, pcancel, err := r.prompts.AttachCDP(ctx, r.bctx, n, promptwatch.Ready+` && document.activeElement?.id === "value"`)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pcancel)
	return &prompt{t: t, id: id, url: r.prompts.Window(id).URL, ctx: pctx}
}

// send types secret into the prompt and presses Enter, as the human would.
// The host may close the window before the key is released: that ends
// the key event with the target detached, which is no failure.
func (p *prompt) send(secret []byte) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.KeyEvent(string(secret))); err != nil {
		p.t.Fatalf("type into the prompt failed")
	}
	if err := chromedp.Do(p.ctx, chromedp.KeyEvent(kb.Enter)); err != nil && !errors.Is(err, chromedp.ErrTargetDetached) {
		p.t.Fatalf("press Enter in the prompt: %v", err)
	}
}

// title is the prompt page's title.
func (p *prompt) title() string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.title`))
	if err != nil || s == "" {
		p.t.Fatalf("the prompt's title: %q, %v", s, err)
	}
	return s
}

// closeWindow closes the prompt as the human would close its window.
func (r *rig) closeWindow(t testing.TB, p *prompt) {
	t.Helper()
	if _, err := chromedp.CallBrowser(r.bctx, target.CloseTarget, target.CloseTargetParams{TargetID: target.ID(p.id)}); err != nil {
		t.Fatalf("close the prompt: %v", err)
	}
}

// waitPromptClosed waits for the prompt to close.
func (r *rig) waitPromptClosed(t testing.TB, p *prompt) {
	t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 15*time.Second)
	defer cancel()
	if err := r.prompts.WaitClosed(ctx, p.id); err != nil {
		t.Error(err)
	}
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
