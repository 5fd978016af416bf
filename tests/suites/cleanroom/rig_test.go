//go:build linux

package cleanroom

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/fakes/notifyd"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/desktop"
	"github.com/fillgate/fillgate/tests/kit/fgenv"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/hostwait"
	"github.com/fillgate/fillgate/tests/kit/ledger"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
	"github.com/fillgate/fillgate/tests/kit/sessionsite"
)

// gtk2 is the pinentry the person answers in (the policy names it, so the
// dialog is the same on every machine).
const gtk2 = "/usr/bin/pinentry-gtk-2"

// The two ways fillgate reaches the driven browser.
const (
	viaExtension = "extension"
	viaCDP       = "cdp"
)

// basePolicy is the person's policy: the defaults where it matters
// (prompt = "auto", driven = "clean-room"), many requests from one agent,
// no cool-down, a short budget, the person's own pinentry, and no offer
// to remember a typed value (one dialog per typed fill). extra comes
// after it.
func basePolicy(extra string) string {
	return fmt.Sprintf(`# fillgate clean-room tests: the person's defaults
rate_limit = "1000/1m"
no_response_cooldown = "0s"
prompt_budget = "45s"
pinentry = %q

[service."127.0.0.1"]
remember = false

[service."127.0.0.2"]
remember = false
%s`, gtk2, extra)
}

// rig is one set-up: a temp root (HOME and the XDG dirs), a private X
// display the native dialog shows on and a person at it, the driven
// Chromium (headless, with a debugging port: the agent's; with the real
// extension and host on the extension path), and the test's own CDP
// connection to it, which plays the agent's tools and the person's
// clicks into the page.
type rig struct {
	t      testing.TB
	ctx    context.Context
	via    string
	root   *fgenv.Root
	env    []string
	person *desktop.Person
	chrome *browser.Chromium
	bctx   context.Context
	// Ledger holds every secret of the rig and everything fillgate
	// printed, for the final scan.
	ledger.Ledger
}

// newRig starts it all for via; it stops when the test ends, and then
// every file under the root (the driven browser's profile among them),
// the browser's output and everything fillgate printed are scanned for
// every secret of the rig, and the clean rooms' directory must be empty.
func newRig(t *testing.T, ctx context.Context, via string) *rig {
	t.Helper()
	return startRig(t, ctx, via, false)
}

// newKeyringRig is newRig with a real Secret Service and a desktop
// notification service on a private session bus, which the browser, its
// host and fillgate share: saved values, and the CDP path's notices.
// secretservice uses t.Setenv: the test must not be parallel.
func newKeyringRig(t *testing.T, ctx context.Context, via string) (*rig, *notifyd.Daemon) {
	t.Helper()
	secretservice.Start(t)
	notices := notifyd.Start(t)
	return startRig(t, ctx, via, true), notices
}

// onBothPaths runs f on each path fillgate reaches the driven browser by,
// each with a rig of its own (for at most 8 minutes) and the session site.
func onBothPaths(t *testing.T, f func(t *testing.T, r *rig, site *sessionsite.Site)) {
	for _, via := range []string{viaExtension, viaCDP} {
		t.Run(via, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
			defer cancel()
			f(t, newRig(t, ctx, via), sessionsite.Start(t))
		})
	}
}

// startRig is newRig; with bus, the session bus this process was pointed
// at goes into the rig's environment.
func startRig(t *testing.T, ctx context.Context, via string, bus bool) *rig {
	t.Helper()
	if _, err := os.Stat(gtk2); err != nil {
		t.Fatalf("%s is missing: run tests/setup (it installs pinentry-gtk2, xvfb, xdotool)", gtk2)
	}
	root := fgenv.New(t, "fgcr-")
	r := &rig{t: t, ctx: ctx, via: via, root: root, env: root.Env}
	t.Cleanup(r.finalScan) // after the browser stopped
	// A temporary directory of the rig's own, for fillgate, its rooms and
	// the driven browser: the final scan reads it and wants it empty.
	tmp := filepath.Join(root.Dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	r.env = append(r.env, "TMPDIR="+tmp)
	display := desktop.Start(t)
	r.person = display.Person(t)
	r.env = append(r.env, display.Env()...)
	if bus {
		r.env = append(r.env, "DBUS_SESSION_BUS_ADDRESS="+os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	}
	r.writePolicy(basePolicy(""))
	profile := filepath.Join(root.Dir, "profile")
	opts := browser.ChromiumOptions{UserDataDir: profile, Env: r.env}
	if via == viaExtension {
		opts.Extensions = []string{r.install(profile)}
	}
	r.chrome = browser.StartChromium(t, ctx, opts)
	r.env = append(r.env, fmt.Sprintf("FILLGATE_CDP_URL=http://127.0.0.1:%d", r.chrome.Port))
	r.bctx = r.chrome.Attach(t, ctx)
	if via == viaExtension {
		r.waitHost()
	}
	return r
}

// writePolicy writes the person's policy, which must be valid.
func (r *rig) writePolicy(text string) { r.t.Helper(); fgenv.WritePolicy(r.t, r.env, text) }

// install runs `fillgate install` for the profile as a person would and
// returns the unpacked extension's directory.
func (r *rig) install(profile string) string {
	r.t.Helper()
	out, code := r.cli("install", "--json", "--browser", "chromium", "--user-data-dir", profile)
	return fgrun.Installed(r.t, out, code, profile)
}

// waitHost waits until the host runs with the extension connected.
func (r *rig) waitHost() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 60*time.Second)
	defer cancel()
	hs, err := hostwait.Until(ctx, r.root.RunDir, hostwait.One(hostwait.Connected))
	if err != nil {
		r.t.Fatalf("no host with the extension connected: %v", err)
	}
	if hs[0].Caller != manifest.ExtensionOrigin {
		r.t.Fatalf("host status %+v", hs[0])
	}
}

// cli runs fillgate to its end in the rig's environment.
func (r *rig) cli(args ...string) ([]byte, int) {
	r.t.Helper()
	cmd := exec.CommandContext(r.ctx, fillgateBin, args...)
	cmd.Env = r.env
	out, errOut, code := fgrun.Command(r.t, cmd)
	r.Keep(out, errOut)
	return out, code
}

// finalScan runs after the browser stopped: every file under the root,
// the browser's output and everything fillgate printed, for every secret;
// and no clean room's profile, nor anything in TMPDIR, is left.
func (r *rig) finalScan() {
	t := r.t
	rooms := filepath.Join(r.root.RunDir, "rooms")
	if entries, err := os.ReadDir(rooms); err == nil && len(entries) > 0 {
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		t.Errorf("clean rooms left behind in %s: %v", rooms, names)
	}
	// A room's browser, killed or not, leaves nothing in TMPDIR (Chromium
	// keeps its singleton socket there and removes it only on a clean exit).
	if left, err := filepath.Glob(filepath.Join(r.root.Dir, "tmp", "*")); err == nil && len(left) > 0 {
		t.Errorf("left behind in the rig's TMPDIR: %v", left)
	}
	if t.Failed() {
		if log, err := os.ReadFile(filepath.Join(r.root.StateDir, "fillgate.log")); err == nil {
			t.Logf("fillgate.log, its end:\n%s", r.Tail(log))
		}
		t.Logf("the driven browser's output, its end:\n%s", r.Tail([]byte(r.chrome.Output())))
	}
	r.Scan(t, r.root.Dir, map[string][]byte{"the driven browser's output": []byte(r.chrome.Output())})
}

// scanFillgate scans fillgate's log and audit log for secret.
func (r *rig) scanFillgate(t testing.TB, secret []byte) { fgenv.ScanLogs(t, r.root.StateDir, secret) }

// tab is a page of the driven browser, driven over the test's own CDP
// connection.
type tab struct {
	t   testing.TB
	ctx context.Context
	id  target.ID
}

// open opens url in a new window of the driven browser, in front, as the
// agent would.
func (r *rig) open(t testing.TB, url string) *tab {
	t.Helper()
	ctx, id := browser.OpenTab(t, r.bctx, url, true)
	return &tab{t: t, ctx: ctx, id: id}
}

// front brings the tab to the front.
func (tb *tab) front() { tb.t.Helper(); browser.Front(tb.t, tb.ctx) }

// eval evaluates js in the page and decodes its value into out.
func (tb *tab) eval(js string, out any) { tb.t.Helper(); browser.Eval(tb.t, tb.ctx, js, out) }

// waitFor waits until js is true in the page (it may navigate meanwhile).
func (tb *tab) waitFor(js string) { tb.t.Helper(); browser.WaitFor(tb.t, tb.ctx, js, 20*time.Second) }

// focus focuses the field with id once the page has it, as the agent
// does before it asks.
func (tb *tab) focus(id string) {
	tb.t.Helper()
	tb.waitFor(`document.readyState === "complete" && document.getElementById(` + quote(id) + `) !== null`)
	browser.Focus(tb.t, tb.ctx, id)
}

// typeInto sets a text field's value as the agent's tools do (not a
// secret: a user name), once the page has it.
func (tb *tab) typeInto(id, value string) {
	tb.t.Helper()
	tb.waitFor(`document.readyState === "complete" && document.getElementById(` + quote(id) + `) !== null`)
	browser.TypeInto(tb.t, tb.ctx, id, value)
}

// location is where the tab is now.
func (tb *tab) location() string {
	var href string
	tb.eval(`location.href`, &href)
	return href
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fillRun is one `fillgate fill --json` run as the agent.
type fillRun struct {
	r *rig
	*fgrun.Run
}

// fill starts `fillgate fill --json --service service args...`, over the
// rig's path.
func (r *rig) fill(t testing.TB, service string, args ...string) *fillRun {
	t.Helper()
	all := append([]string{"fill", "--json", "--service", service}, args...)
	if r.via == viaCDP {
		all = append(all, "--via", "cdp")
	}
	cmd := exec.CommandContext(r.ctx, fillgateBin, all...)
	cmd.Env = r.env
	cmd.WaitDelay = 5 * time.Second
	return &fillRun{r: r, Run: fgrun.Start(t, cmd)}
}

// result waits for the run and returns its one JSON result.
func (f *fillRun) result(t testing.TB) fill.Result {
	t.Helper()
	return f.Checked(t, f.r.ctx, &f.r.Ledger)
}

// types waits for the native dialog the run opens and types value into
// it, as the person does, and presses Return.
func (f *fillRun) types(t testing.TB, value []byte) {
	t.Helper()
	ctx, cancel := f.Awaiting(f.r.ctx, 60*time.Second)
	defer cancel()
	if err := f.r.person.TypeInDialog(ctx, value); err != nil {
		t.Fatalf("the person: %s (fillgate said %s)", f.r.Withheld([]byte(err.Error())), f.r.Withheld(f.Stdout()))
	}
}

// presses waits for the run's native dialog and presses keys in it.
func (f *fillRun) presses(t testing.TB, keys ...string) {
	t.Helper()
	ctx, cancel := f.Awaiting(f.r.ctx, 60*time.Second)
	defer cancel()
	if err := f.r.person.PressInDialog(ctx, keys...); err != nil {
		t.Fatalf("the person: %s (fillgate said %s)", f.r.Withheld([]byte(err.Error())), f.r.Withheld(f.Stdout()))
	}
}

// remember stores secret as the saved password of service, as the person
// does (`fillgate remember --stdin`: the value on standard input only).
func (r *rig) remember(t testing.TB, service string, secret []byte) {
	t.Helper()
	cmd := exec.CommandContext(r.ctx, fillgateBin, "remember", "--service", service, "--stdin")
	cmd.Env = r.env
	in := append(bytes.Clone(secret), '\n')
	defer clear(in)
	cmd.Stdin = bytes.NewReader(in)
	out, errOut, code := fgrun.Command(t, cmd)
	r.Keep(out, errOut)
	if code != 0 {
		t.Fatalf("fillgate remember exited %d: %s", code, r.Withheld(errOut))
	}
}

// lastAudit is the audit log's newest entry.
func (r *rig) lastAudit(t testing.TB) fill.AuditEntry { return fgenv.LastAudit(t, r.root.StateDir) }

// noDialog checks that no native dialog is on the display now.
func (r *rig) noDialog(t testing.TB) {
	t.Helper()
	if r.person.Visible(r.ctx, "^[Pp]inentry") {
		t.Error("a native dialog is open, though nothing was to be asked")
	}
}
