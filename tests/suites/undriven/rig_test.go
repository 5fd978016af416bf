//go:build linux

package undriven

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/attackext"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/desktop"
	"github.com/fillgate/fillgate/tests/kit/envlist"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/hostwait"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

// pinentryGTK is the native dialog the person's policy names: Debian's
// /usr/bin/pinentry points at pinentry-gnome3, which needs GNOME's prompter
// on the session bus, so the policy picks the GTK one, as a person
// without GNOME would.
const pinentryGTK = "/usr/bin/pinentry-gtk-2"

// basePolicy is the person's policy: the defaults (prompt = "auto", a
// 10-minute cool-down after an unanswered prompt, approval "each"), the
// GTK pinentry, and room for every request of a test in one minute (the
// default 6 a minute is the agent's whole budget for a test's scenarios).
const basePolicy = `# fillgate: the person's policy for the undriven tests.
pinentry = "` + pinentryGTK + `"
rate_limit = "60/1m"
`

// rig is one person's desktop: a private X server, a real Secret Service
// (gnome-keyring), a headful Chromium started with no remote debugging,
// the real extension and host manifest (written by `fillgate install`),
// with withAttacker the attacking extension next to it (idle until it
// gets an order), the login site, and the temp root that holds every file
// the browser, the host and the agent write.
type rig struct {
	t   *testing.T
	ctx context.Context

	root       string // HOME, the XDG dirs and the browser profile
	env        []string
	runDir     string // $XDG_RUNTIME_DIR/fillgate
	stateDir   string // $XDG_STATE_HOME/fillgate: fillgate.log, audit.jsonl
	policyPath string

	display *desktop.Display
	person  *desktop.Person
	site    *site
	browser *browser.Chromium
	hostPID int
	// attacker gives tests/fakes/attackext its orders; nil without one.
	attacker *attackext.Server
	// profile is the browser's profile directory.
	profile string
	// agents are every `fillgate fill` this rig ran, for the leak scans.
	agents []*fgrun.Run
	// secrets are every value the scenarios made, which safe withholds.
	secrets [][]byte
}

// newRig starts the person's desktop and browser, waits for the
// extensions to connect (fillgate's to its host, with withAttacker the
// attacker's to the test) and for the login page to have its password
// field focused. Everything it starts ends with the test.
func newRig(t *testing.T, ctx context.Context, withAttacker bool) *rig {
	t.Helper()
	desktop.Need(t, "Xvfb", "xdotool", "xwininfo", "import")
	if _, err := os.Stat(pinentryGTK); err != nil {
		t.Fatalf("%s is missing: run tests/setup (it installs pinentry-gtk2)", pinentryGTK)
	}
	root, err := os.MkdirTemp("", "fgund-") // short: sun_path holds 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, ctx: ctx, root: root}
	// First registered, so it runs last: once the browser, the X server
	// and the keyring daemon were stopped, nothing of the rig may run on.
	t.Cleanup(func() { r.noLeftovers(r.inRoot()) })
	t.Cleanup(func() { _ = os.RemoveAll(root) })

	r.display = desktop.Start(t)
	// Runs once the browser was stopped, while the display still runs.
	t.Cleanup(func() { r.noLeftovers(r.onDisplay()) })
	r.person = r.display.Person(t)
	r.env = append(browser.BaseEnv(root), r.display.Env()...)
	r.env = append(r.env, "FILLGATE_LOG=debug")
	secretservice.Start(t) // points this process's DBUS_SESSION_BUS_ADDRESS at it
	r.env = append(r.env, "DBUS_SESSION_BUS_ADDRESS="+os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	if r.runDir, err = dirs.Runtime(r.getenv); err != nil {
		t.Fatal(err)
	}
	if r.stateDir, err = dirs.State(r.getenv); err != nil {
		t.Fatal(err)
	}
	if r.policyPath, err = dirs.PolicyFile(r.getenv); err != nil {
		t.Fatal(err)
	}
	r.setPolicy(t, "")

	r.profile = filepath.Join(root, "profile")
	extensions := []string{r.install(t, r.profile)}
	r.site = startSite(t)
	if withAttacker {
		r.attacker = attackext.Start(t)
		extensions = append(extensions, r.attacker.Install(t, root))
	}
	r.browser = browser.StartChromium(t, ctx, browser.ChromiumOptions{
		UserDataDir: r.profile,
		Extensions:  extensions,
		Env:         r.env,
		Headed:      true,
		Undriven:    true,
		Args:        []string{"--ozone-platform=x11", r.site.URL + "/classic"},
	})
	r.site.inBrowser(r.browser.Cmd.Process.Pid)
	r.hostPID = r.waitHost(t)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if r.attacker != nil {
		if err := r.attacker.Connected(wctx); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := r.site.loginReady(wctx, ""); err != nil {
		t.Fatalf("the login page: %v (last state %+v)", err, st)
	}
	return r
}

// getenv looks a variable up in the rig's environment.
func (r *rig) getenv(key string) string { return envlist.Get(r.env, key) }

// secret returns a new random value (leakscan.NewSecret) that safe
// withholds from everything the test prints from then on.
func (r *rig) secret(t testing.TB) []byte {
	s := leakscan.NewSecret(t)
	r.secrets = append(r.secrets, s)
	return s
}

// safe is s, or a note in its place when it holds one of the secrets.
func (r *rig) safe(s string) string {
	for _, sec := range r.secrets {
		if leakscan.Contains([]byte(s), sec) {
			return "[withheld: it holds a secret]"
		}
	}
	return s
}

// show is a result as the test prints it (JSON, withheld by safe).
func (r *rig) show(res fill.Result) string {
	b, _ := json.Marshal(res)
	return r.safe(string(b))
}

// setPolicy writes the person's policy: basePolicy and extra. The host
// reads it afresh for each request.
func (r *rig) setPolicy(t testing.TB, extra string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(r.policyPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.policyPath, []byte(basePolicy+extra), 0o600); err != nil {
		t.Fatal(err)
	}
}

// cli runs fillgate with args (and stdin) in the rig's environment and
// returns its stdout, stderr and exit code.
func (r *rig) cli(t testing.TB, stdin []byte, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, fillgateBin, args...)
	cmd.Env = r.env
	cmd.SysProcAttr = dieWithTest()
	cmd.Stdin = bytes.NewReader(stdin)
	return fgrun.Command(t, cmd)
}

// dieWithTest has the kernel kill a program the test starts if the test
// process dies first, even by SIGKILL.
func dieWithTest() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// install runs `fillgate install --browser chromium --user-data-dir
// profile --json`, as a person would, checks that it wrote one host
// manifest into the profile, and returns the unpacked extension.
func (r *rig) install(t testing.TB, profile string) string {
	t.Helper()
	out, errOut, code := r.cli(t, nil, "install", "--json", "--browser", "chromium", "--user-data-dir", profile)
	if code != 0 {
		t.Fatalf("fillgate install exited %d: %s%s", code, out, errOut)
	}
	return fgrun.Installed(t, out, code, profile)
}

// waitHost waits until the browser's host runs with the extension
// connected, and returns its pid.
func (r *rig) waitHost(t testing.TB) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	hs, err := hostwait.Until(ctx, r.runDir, hostwait.One(hostwait.Connected))
	if err != nil {
		t.Fatalf("the extension did not connect to a fillgate host (%v); last status %+v; the browser said:\n%s",
			err, hs, r.browser.Output())
	}
	return hs[0].PID
}

// undriven opens a fresh login page unless the login page is open with
// its password field focused and empty, and waits until the host says
// that nothing drives the browser and that its active tab has that field
// focused: what a fill needs to ask in the page.
func (r *rig) undriven(t testing.TB) {
	t.Helper()
	r.loginOpen(t)
	r.awaitHost(t, "the browser undriven with the login field focused", func(h agentsock.HostStatus) bool {
		return h.Drive != nil && !h.Drive.Driven &&
			h.ActiveTab != nil && h.ActiveTab.Origin == r.site.URL && h.ActiveTab.Field == fill.FieldPassword
	})
}

// drivenBy opens a fresh login page unless it is open with its password
// field focused and empty, and waits until the host says that the
// browser can be driven for a reason that says why, and that its active
// tab has that field focused.
func (r *rig) drivenBy(t testing.TB, why string) {
	t.Helper()
	r.loginOpen(t)
	r.awaitHost(t, "the browser drivable ("+why+") with the login field focused", func(h agentsock.HostStatus) bool {
		return h.Drive != nil && h.Drive.Driven && slices.ContainsFunc(h.Drive.Reasons, func(s string) bool { return strings.Contains(s, why) }) &&
			h.ActiveTab != nil && h.ActiveTab.Origin == r.site.URL && h.ActiveTab.Field == fill.FieldPassword
	})
}

// loginOpen opens a fresh login page unless the login page is open with
// its password field focused and empty.
func (r *rig) loginOpen(t testing.TB) {
	t.Helper()
	if st, err := r.site.state(r.ctx); err != nil || st.Path != "/classic" || st.Focused != "pw" || !st.Left {
		if err := r.site.openLogin(r.ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitHost waits up to 10 s until the one host's status is ok, and
// fails the test saying it wanted what, with the last status (and the
// host's reasons when it said the browser can be driven).
func (r *rig) awaitHost(t testing.TB, what string, ok func(agentsock.HostStatus) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	last, err := hostwait.Until(ctx, r.runDir, hostwait.One(ok))
	if err == nil {
		return
	}
	if len(last) == 1 && last[0].Drive != nil && last[0].Drive.Driven {
		t.Fatalf("want %s; the host says the browser can be driven: %s", what, strings.Join(last[0].Drive.Reasons, "; "))
	}
	b, _ := json.Marshal(last)
	t.Fatalf("want %s; the host's last status: %s", what, b)
}

// fill starts `fillgate fill --json --service <the site>` with args, as
// the agent.
func (r *rig) fill(t testing.TB, args ...string) *fgrun.Run {
	t.Helper()
	cmd := exec.CommandContext(r.ctx, fillgateBin, append([]string{"fill", "--json", "--service", r.site.Service()}, args...)...)
	cmd.Env = r.env
	cmd.SysProcAttr = dieWithTest()
	a := fgrun.Start(t, cmd)
	r.agents = append(r.agents, a)
	return a
}

// result waits (within 60 s) for the agent to exit and returns its one
// JSON result. Nothing but that one line may be on its stdout, and the
// exit code must be the status's.
func (r *rig) result(t testing.TB, a *fgrun.Run) fill.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 60*time.Second)
	defer cancel()
	res, code, err := a.Result(ctx)
	if err != nil {
		t.Fatalf("%v; stderr: %s", err, r.safe(string(a.Stderr())))
	}
	if code != res.Status.ExitCode() {
		t.Errorf("fillgate fill exited %d with status %s; want exit code %d", code, res.Status, res.Status.ExitCode())
	}
	if res.Service != r.site.Service() || res.Via != fill.ViaExtension {
		t.Errorf("result %s; want service %s via the extension", r.show(res), r.site.Service())
	}
	return res
}

// submitted checks that a result of a fill that inserted says the form
// was submitted and the page navigated away: the value is in no field
// any more.
func (r *rig) submitted(t testing.TB, res fill.Result) {
	t.Helper()
	if res.Submitted == nil || !*res.Submitted || res.Navigated == nil || !*res.Navigated {
		t.Errorf("result %s; want the form submitted and the page navigated away", r.show(res))
	}
}

// want checks a result's status and that its detail says each of
// details.
func (r *rig) want(t testing.TB, res fill.Result, status fill.Status, details ...string) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("result %s; want %s", r.show(res), status)
	}
	for _, d := range details {
		if !strings.Contains(res.Detail, d) {
			t.Errorf("the result's detail %q does not say %q", r.safe(res.Detail), d)
		}
	}
}

// lastAudit waits until the audit log's newest entry has status and
// returns it (the host records an outcome as its flow ends).
func (r *rig) lastAudit(t testing.TB, status fill.Status) fill.AuditEntry {
	t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	var es []fill.AuditEntry
	if err := poll.Until(ctx, 20*time.Millisecond, func() (bool, error) {
		var err error
		es, err = audit.Open(r.stateDir).Recent(1)
		return len(es) == 1 && es[0].Status == status, err
	}); err != nil {
		t.Fatalf("the audit log's newest entry is %+v (%v); want status %s", es, err, status)
	}
	return es[0]
}

// hostLog is what the host wrote to fillgate.log so far.
func (r *rig) hostLog(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.stateDir, "fillgate.log"))
	if err != nil {
		t.Fatalf("read fillgate.log: %v", err)
	}
	return string(b)
}

// scan looks for secret everywhere it must not be: every file under the
// rig's temp root (the browser profile, fillgate's log, audit log and
// state, the installed files), every agent's stdout and stderr, the
// command line and environment of the host and the browser, and what the
// attacker reported. The login server may hold it only in the logins it
// received with it (logins of them).
func (r *rig) scan(t testing.TB, secret []byte, logins int) {
	t.Helper()
	if n := leakscan.Dirs(t, secret, r.root); n == 0 {
		t.Error("leak scan: no file under the temp root was read")
	}
	for i, a := range r.agents {
		select {
		case <-a.Done():
		case <-r.ctx.Done():
			t.Fatalf("agent %d still runs: %v", i+1, r.ctx.Err())
		}
		leakscan.Bytes(t, secret, fmt.Sprintf("agent %d's stdout", i+1), a.Stdout())
		leakscan.Bytes(t, secret, fmt.Sprintf("agent %d's stderr", i+1), a.Stderr())
	}
	leakscan.Process(t, secret, r.hostPID)
	leakscan.Process(t, secret, r.browser.Cmd.Process.Pid)
	if r.attacker != nil {
		for _, m := range r.attacker.Seen() {
			leakscan.Agent(t, secret, "what the attacking extension reported", m)
		}
	}
	carrying, sent := r.site.Login.Carrying(secret), r.site.Login.Logins("/classic/login", secret)
	if carrying != logins || sent != logins {
		t.Errorf("the login server got the value in %d requests (%d logins); want it in exactly %d logins and nowhere else", carrying, sent, logins)
	}
}
