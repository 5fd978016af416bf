//go:build linux

package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/notifyd"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/desktop"
	"github.com/fillgate/fillgate/tests/kit/fgenv"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/loginserver"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/promptwatch"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
	"github.com/fillgate/fillgate/tests/kit/sessionsite"
)

// policy is the benchmark's policy: many requests from one agent, no
// cool-down, and the CDP path's prompt as a tab of the browser (no system
// opener on a headless machine). The browser has a debugging port (the
// benchmark drives its pages), so prompt = "browser" keeps the person's
// answer in the loopback page for the page-prompt figures; the native
// dialog's figures set prompt = "native" (writePolicy). Every check on the
// page stays. The in-page figures say driven = "in-page" (the person lets
// fillgate type into the browser the benchmark drives); the clean room's
// site and the site of the fills with no human keep the default, the
// clean room (writePolicy).
const policy = `rate_limit = "1000/1m"
no_response_cooldown = "0s"
prompt_opener = "cdp-tab"
driven = "in-page"
`

// unaskedHost is the address of the site whose fills need no human.
const unaskedHost = "127.0.0.3"

// rig is the benchmark's one browser: headless Chromium with the real
// extension (installed by the real installer) and a debugging port, the
// host it started, and the login site.
type rig struct {
	t        testing.TB
	ctx      context.Context
	root     string
	env      []string
	chrome   *browser.Chromium
	bctx     context.Context
	site     *loginserver.Server
	unasked  *loginserver.Server // the site whose fills need no human
	sessions *sessionsite.Site   // the clean room's figures' site: real sessions
	stateDir string              // fillgate.log, with its timing records
	prompts  *promptwatch.Watch
	hostRoot string // a second environment, for the cold-start host
	// person answers the native dialog on the rig's own X display, where
	// the host (the browser's environment) and the CDP path's fillgate
	// fill both show it.
	person *desktop.Person
}

func newRig(t testing.TB, ctx context.Context) *rig {
	t.Helper()
	fg := fgenv.New(t, "fgbench-")
	root := fg.Dir
	r := &rig{t: t, ctx: ctx, root: root, env: fg.Env, stateDir: fg.StateDir}
	display := desktop.Start(t)
	r.person = display.Person(t)
	r.env = append(r.env, display.Env()...)
	// A real Secret Service and a notification service on a private bus,
	// for the fills with no human (approval = none): the remembered value
	// comes from the keyring, and the CDP path's notice goes to the bus.
	secretservice.Start(t)
	notifyd.Start(t)
	r.env = append(r.env, "DBUS_SESSION_BUS_ADDRESS="+os.Getenv("DBUS_SESSION_BUS_ADDRESS"), "FILLGATE_LOG=debug")
	t.Cleanup(func() {
		if out := os.Getenv("FGBENCH_LOG"); out != "" {
			data, _ := os.ReadFile(filepath.Join(fg.StateDir, "fillgate.log"))
			_ = os.WriteFile(out, data, 0o600)
		}
	})
	profile := filepath.Join(root, "profile")
	out, code := r.cli("install", "--json", "--browser", "chromium", "--user-data-dir", profile)
	extDir := fgrun.Installed(t, out, code, profile)
	r.site = loginserver.Start(t, "127.0.0.1")
	// The site of the fills with no human, on an address of its own so its
	// policy (approval = none) touches no other figure.
	r.unasked = loginserver.Start(t, unaskedHost)
	r.sessions = sessionsite.Start(t)
	r.sessions.SetPassword([]byte(sample))
	r.writePolicy(promptInBrowser)
	remember := exec.CommandContext(ctx, fillgateBin, "remember", "--service", unaskedHost, "--stdin")
	remember.Env, remember.Stdin = r.env, strings.NewReader(sample+"\n")
	if out, errOut, code := fgrun.Command(t, remember); code != 0 {
		t.Fatalf("fillgate remember exited %d: %s%s", code, out, errOut)
	}
	r.chrome = browser.StartChromium(t, ctx, browser.ChromiumOptions{
		UserDataDir: profile, Extensions: []string{extDir}, Env: r.env,
	})
	r.env = append(r.env, fmt.Sprintf("FILLGATE_CDP_URL=http://127.0.0.1:%d", r.chrome.Port))
	r.bctx = r.chrome.Attach(t, ctx)
	site := promptwatch.OnLoopbackBut(r.site.URL)
	r.prompts = promptwatch.CDP(t, r.bctx, func(url string) bool {
		return site(url) && !strings.HasPrefix(url, r.sessions.App+"/")
	})
	r.waitHost()
	r.hostRoot = filepath.Join(root, "coldstart")
	return r
}

// Where the person answers, for writePolicy. The native dialog's figures
// time one dialog, as the page is one page: the offer to remember a typed
// value, which the page makes with a checkbox, would be a second dialog
// there, so it is off for the login site.
const (
	promptInBrowser = `prompt = "browser"`
	promptNative    = `prompt = "native"` + "\n\n[service.\"127.0.0.1\"]\nremember = false"
)

// writePolicy writes the benchmark's policy with where the person
// answers (promptInBrowser or promptNative). The host reads
// the file afresh for every request.
func (r *rig) writePolicy(where string) {
	r.t.Helper()
	u, err := url.Parse(r.unasked.URL)
	if err != nil {
		r.t.Fatal(err)
	}
	rooms := fmt.Sprintf("\n[service.%q]\ndriven = \"clean-room\"\nremember = false\n", r.sessionsService())
	fgenv.WritePolicy(r.t, r.env, policy+where+"\n"+fmt.Sprintf("\n[service.%q]\napproval = \"none\"\ndriven = \"clean-room\"\n", unaskedHost+":"+u.Port())+rooms)
}

// cli runs fillgate with args and returns its stdout and exit code.
func (r *rig) cli(args ...string) ([]byte, int) {
	cmd := exec.CommandContext(r.ctx, fillgateBin, args...)
	cmd.Env = r.env
	out, _, code := fgrun.Command(r.t, cmd)
	return out, code
}

// waitHost waits until the browser's host answers with the extension
// connected.
func (r *rig) waitHost() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	var out []byte
	if poll.Until(ctx, 100*time.Millisecond, func() (bool, error) {
		var code int
		out, code = r.cli("status", "--json")
		var hs []struct {
			Extension struct{ Connected bool } `json:"extension"`
		}
		return code == 0 && json.Unmarshal(out, &hs) == nil && len(hs) == 1 && hs[0].Extension.Connected, nil
	}) != nil {
		r.t.Fatalf("the extension did not connect: %s", out)
	}
}

// run is one `fillgate fill --json` as an agent runs it.
type run struct{ *fgrun.Run }

func (r *rig) fill(args ...string) *run {
	r.t.Helper()
	cmd := exec.CommandContext(r.ctx, fillgateBin, append([]string{"fill", "--json"}, args...)...)
	cmd.Env = r.env
	return &run{fgrun.Start(r.t, cmd)}
}

// result waits for the run and returns its result.
func (a *run) result(t testing.TB, ctx context.Context) fill.Result {
	t.Helper()
	res, _, err := a.Result(ctx)
	if err != nil {
		t.Fatalf("%v: %q", err, a.Stdout())
	}
	return res
}

// tab is the login page in a tab of its own, driven as the user.
type tab struct {
	t    testing.TB
	ctx  context.Context
	mark string // in its URL, for the reference to find it
}

func (r *rig) open(path string) *tab { return r.openOn(r.site, path) }

// openOn opens path of site in a tab of its own.
func (r *rig) openOn(site *loginserver.Server, path string) *tab {
	r.t.Helper()
	mark := fmt.Sprintf("fgbench%d", time.Now().UnixNano())
	return &tab{t: r.t, ctx: browser.NewTab(r.t, r.bctx, site.URL+path+"?s="+mark), mark: mark}
}

// close closes the tab (the CDP path must find one tab of the site).
func (tb *tab) close() {
	tb.t.Helper()
	if err := chromedp.Cancel(tb.ctx); err != nil {
		tb.t.Fatalf("close the tab: %v", err)
	}
}

// focus empties and focuses the field with id.
func (tb *tab) focus(id string) {
	tb.t.Helper()
	ok, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](`((f) => { f.value = ""; f.focus(); return document.activeElement === f; })(document.getElementById("`+id+`"))`))
	if err != nil || !ok {
		tb.t.Fatalf("focus %s: %v", id, err)
	}
}

// answer waits for prompt number n to be painted with its field focused,
// types text and presses Enter, as the person would. It returns when the
// page was first painted (the page's own first-contentful-paint, on the
// system clock) and when Enter was pressed.
func (r *rig) answer(a *run, n int, text string) (painted, enter time.Time) {
	r.t.Helper()
	ctx, cancel := a.Awaiting(r.ctx, 30*time.Second)
	defer cancel()
	id, err := r.prompts.Next(ctx, n)
	if err != nil {
		r.t.Fatalf("%v; fillgate fill printed %s", err, a.Stdout())
	}
	pctx, pcancel, err := browser.AttachTarget(ctx, r.bctx, target.ID(id))
	if err != nil {
		r.t.Fatal(err)
	}
	defer pcancel()
	if err := poll.Until(ctx, 5*time.Millisecond, func() (bool, error) {
		// The epoch milliseconds of the first paint, once the field has
		// focus; 0 until then.
		at, err := chromedp.Run(pctx, chromedp.Evaluate[float64](`(() => {
			const p = performance.getEntriesByName("first-contentful-paint")[0];
			return p && document.activeElement && document.activeElement.id === "value" ? performance.timeOrigin + p.startTime : 0;
		})()`))
		painted = time.UnixMicro(int64(at * 1000))
		return at > 0, err
	}); err != nil {
		r.t.Fatalf("the prompt was never painted with its field focused: %v", err)
	}
	if err := chromedp.Do(pctx, chromedp.KeyEvent(text)); err != nil {
		r.t.Fatalf("type into the prompt: %v", err)
	}
	enter = time.Now()
	if err := chromedp.Do(pctx, chromedp.KeyEvent(kb.Enter)); err != nil && !errors.Is(err, chromedp.ErrTargetDetached) {
		r.t.Fatalf("press Enter: %v", err)
	}
	return painted, enter
}

// holds reports whether the field with id holds want (compared in the
// page; neither is printed).
func (tb *tab) holds(id, want string) bool {
	tb.t.Helper()
	w, _ := json.Marshal(want)
	ok, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](`document.getElementById("`+id+`").value === `+string(w)))
	return err == nil && ok
}

// answerNative waits for the native dialog of run a, types text into it
// and presses Enter, as the person would. It returns when the dialog was
// first seen on the display and when Enter was pressed.
func (r *rig) answerNative(a *run, text string) (shown, enter time.Time) {
	r.t.Helper()
	ctx, cancel := a.Awaiting(r.ctx, 30*time.Second)
	defer cancel()
	if poll.Until(ctx, 2*time.Millisecond, func() (bool, error) {
		visible := r.person.Visible(ctx, "^[Pp]inentry")
		shown = time.Now()
		return visible, nil
	}) != nil {
		select {
		case <-a.Done():
			r.t.Fatalf("fillgate fill ended without a dialog: %s", a.Stdout())
		default:
			r.t.Fatal("the native dialog never showed")
		}
	}
	_, err := r.person.WaitDialog(ctx)
	if err == nil {
		err = r.person.Type(ctx, []byte(text))
	}
	if err != nil {
		r.t.Fatalf("type into the native dialog: %v", err)
	}
	// Enter is what ends the run, so it is pressed under the rig's
	// context, not ctx: ctx ends with the run, which can happen before
	// xdotool, whose key already went, has exited (then killed, its run
	// said "context canceled").
	enter = time.Now()
	if err := r.person.Key(r.ctx, "Return"); err != nil {
		r.t.Fatalf("press Enter in the native dialog: %v", err)
	}
	return shown, enter
}

// sessionsService is the clean room's figures' service: the session
// site's host and port.
func (r *rig) sessionsService() string { return strings.TrimPrefix(r.sessions.App, "http://") }

// openURL opens raw in a tab of its own.
func (r *rig) openURL(raw string) *tab {
	r.t.Helper()
	return &tab{t: r.t, ctx: browser.NewTab(r.t, r.bctx, raw)}
}

// typeIn sets a text field's value (a user name, not a secret).
func (tb *tab) typeIn(id, value string) {
	tb.t.Helper()
	v, _ := json.Marshal(value)
	if _, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](`((f) => { f.value = `+string(v)+`; return true; })(document.getElementById("`+id+`"))`)); err != nil {
		tb.t.Fatalf("type into %s: %v", id, err)
	}
}

// logSize is how much of fillgate.log is written now: the timing records
// of a request come after it.
func (r *rig) logSize() int64 {
	st, err := os.Stat(filepath.Join(r.stateDir, "fillgate.log"))
	if err != nil {
		return 0
	}
	return st.Size()
}

// timingRE reads a timing record's step (the Engine's "step" or the clean
// room's "room") and milliseconds out of fillgate.log's text lines.
var timingRE = regexp.MustCompile(`msg=timing .*?(?:step|room)=(\S+) .*?ms=([0-9.]+)`)

// timings are the timing records written to fillgate.log since from, by
// step: the milliseconds each step took (summed, for a step logged more
// than once).
func (r *rig) timings(from int64) map[string]float64 {
	data, err := os.ReadFile(filepath.Join(r.stateDir, "fillgate.log"))
	if err != nil || int64(len(data)) < from {
		return nil
	}
	out := map[string]float64{}
	for _, m := range timingRE.FindAllStringSubmatch(string(data[from:]), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err == nil {
			out[m[1]] += v
		}
	}
	return out
}
