package cdpe2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/fakes/notifyd"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
	"github.com/fillgate/fillgate/tests/kit/sessionsite"
)

// cli runs a fillgate command (not fill) with the scenario's environment.
func (sc *scene) cli(stdin []byte, args ...string) ([]byte, int) {
	sc.t.Helper()
	cmd := exec.CommandContext(sc.ctx, fillgateBin, args...)
	for k, v := range sc.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil && cmd.ProcessState == nil {
		sc.t.Fatalf("fillgate %s: %v", args[0], err)
	}
	sc.output = append(sc.output, out)
	return out, cmd.ProcessState.ExitCode()
}

// TestCDPLease: on the CDP path a lease lives in the state dir, so a
// second `fillgate fill` process fills under the lease the first one's
// approval started; its notice goes to the desktop's notification service
// (a stand-in on a private session bus), since no extension runs there.
//
// A browser reached over CDP is one a program drives, where a saved value
// never goes into the page: the login happens in fillgate's clean room (the
// policy's default, driven = "clean-room") and the tab is handed the
// session. So the page is a real login (tests/kit/sessionsite's "form",
// with server-side sessions): the site must receive the value once per
// fill, from the clean room, and the agent's tab must end signed in where
// the login ended. The tab is opened with openTab, not userTab: it must
// stay open, but navigating it is what the clean room does.
func TestCDPLease(t *testing.T) {
	e := newEnvWithin(t, 5*time.Minute)
	secretservice.Start(t)
	notices := notifyd.Start(t)
	site := sessionsite.Start(t)
	form := site.Archetype("form")
	sc := e.scene(t)
	sc.vars["DBUS_SESSION_BUS_ADDRESS"] = os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	sc.cleanRoom = true
	sc.policy("[service.\"127.0.0.1\"]\napproval = \"lease\"\nlease = \"10m\"\n")
	secret := sc.secret()
	site.SetPassword(secret)
	if out, code := sc.cli(secret, "remember", "--service", "127.0.0.1", "--stdin"); code != 0 {
		t.Fatalf("fillgate remember: exit %d: %s", code, sc.safe(out))
	}
	tb := sc.openTab(form.Login)
	signIn := func() {
		t.Helper()
		if !tb.becomes(`document.readyState === "complete" && document.getElementById("pw") !== null`) {
			t.Fatal("the login page did not load")
		}
		// The agent types the user name, not a secret, and focuses the
		// password field.
		tb.eval(`(() => { const u = document.getElementById("user"); u.value = ` + quote(sessionsite.User) + `;
u.dispatchEvent(new Event("input", {bubbles: true})); document.getElementById("pw").focus(); return true; })()`)
	}
	signIn()

	// Nothing can be left in the field of a driven browser's page: then
	// none is refused before anything is asked, saved value or not.
	o := sc.fill("--service", "127.0.0.1", "--via", "cdp", "--json").wait() // --then none
	o.want(sc, fill.StatusRefused, "(then none)")
	sc.wantOpened(0)
	if site.Received(secret) != 0 || !tb.evalBool(`document.getElementById("pw").value === ""`) {
		t.Fatal("a refused fill sent the value, or the field holds something")
	}

	r := sc.fill("--service", "127.0.0.1", "--via", "cdp", "--then", "submit", "--json")
	p := sc.openPrompt(sc.promptPage(r, 1), site.App)
	// The service's saved value, for the account the page shows.
	if o := p.Offers(); o.From != "from the OS keyring, as "+sessionsite.User || o.As != sessionsite.User {
		t.Fatalf("the prompt offers %+v", o)
	}
	if err := p.Approve(sc.ctx, fakehuman.ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	o = r.wait()
	o.want(sc, fill.StatusOK, "logged in in fillgate's clean room", "the password never entered the agent's browser",
		"the value came from the OS keyring, approved in the prompt", "without a prompt until")
	signedIn(t, sc, tb, o, site, form, secret, 1)
	if len(notices.Notices()) != 0 {
		t.Errorf("a notice for a fill the person approved: %+v", notices.Notices())
	}

	// The site forgets the session, as a restart would; the agent goes
	// back to the login page and asks again.
	site.Expire()
	if whoAmI(t, tb, form) == 200 {
		t.Fatal("the tab is still signed in after the site ended its session: the second login's check below cannot fail")
	}
	tb.navigate(form.Login)
	signIn()
	r = sc.fill("--service", "127.0.0.1", "--via", "cdp", "--then", "submit", "--json")
	if sc.promptedBefore(r, 2) {
		_ = r.cmd.Process.Signal(os.Interrupt) // it closes its prompt
		r.wait()
		t.Fatal("the second fill under the lease asked the person again: a prompt opened")
	}
	o = r.wait()
	o.want(sc, fill.StatusOK, "logged in in fillgate's clean room", "the value came from the OS keyring, under a lease, with a notice and no prompt")
	sc.wantOpened(1)
	signedIn(t, sc, tb, o, site, form, secret, 2)
	got := notices.Notices()
	if len(got) != 1 || got[0].App != "fillgate" {
		t.Fatalf("the desktop got %+v", got)
	}
	for _, want := range []string{"127.0.0.1", site.App, "(pid ", "via fillgate fill", "from the OS keyring"} {
		if !strings.Contains(got[0].Summary+" "+got[0].Body, want) {
			t.Errorf("the notice %+v does not say %q", got[0], want)
		}
	}

	out, code := sc.cli(nil, "saved", "--json")
	var list struct {
		Leases []map[string]any `json:"leases"`
	}
	if code != 0 || json.Unmarshal(out, &list) != nil || len(list.Leases) != 1 || list.Leases[0]["via"] != "cdp" {
		t.Errorf("fillgate saved --json: exit %d, %s", code, sc.safe(out))
	}
	rooms := filepath.Join(sc.vars["XDG_RUNTIME_DIR"], "fillgate", "rooms")
	if left, err := os.ReadDir(rooms); err == nil && len(left) > 0 {
		t.Errorf("%d clean rooms left behind in fillgate's runtime dir", len(left))
	}
}

// promptedBefore reports whether the fake opener got its n-th page before
// run r ended.
func (sc *scene) promptedBefore(r *fillRun, n int) bool {
	sc.t.Helper()
	for {
		select {
		case <-r.done:
			return len(sc.openedPages()) >= n
		case <-sc.ctx.Done():
			return false // r.wait reports it
		case <-time.After(50 * time.Millisecond):
		}
		if len(sc.openedPages()) >= n {
			return true
		}
	}
}

// signedIn checks the outcome of the n-th login through the clean room:
// handed over to the tab, which now shows the site's home page signed in
// (a second request from it is authenticated), and the site received
// secret n times in all, once per login.
func signedIn(t *testing.T, sc *scene, tb *tab, o outcome, site *sessionsite.Site, form sessionsite.Archetype, secret []byte, n int) {
	t.Helper()
	if o.HandedOver == nil || !*o.HandedOver || o.TabOrigin != site.App {
		t.Errorf("result %s: want handed over, the tab at %s", sc.safe(o.stdout), site.App)
	}
	if got, logins := site.Received(secret), site.Logins(form.Name); got != n || logins != n {
		t.Errorf("after login %d the site received the value %d times and let %d logins in; want %d each", n, got, logins, n)
	}
	if !tb.becomes(`location.href.startsWith(` + quote(form.Home) + `) && document.getElementById("welcome") !== null`) {
		t.Fatal("the agent's tab was not navigated to the site's home page, signed in")
	}
	if code := whoAmI(t, tb, form); code != 200 {
		t.Errorf("a second request from the agent's tab is not signed in: %s answered %d", form.WhoAmI, code)
	}
}

// whoAmI is the status of a same-origin request from the tab to the
// site's whoami: 200 when the tab's session is valid.
func whoAmI(t *testing.T, tb *tab, form sessionsite.Archetype) int {
	t.Helper()
	var code int
	raw := tb.eval(`fetch(` + quote(form.WhoAmI) + `, {credentials: "include"}).then((r) => r.status)`)
	if err := json.Unmarshal(raw, &code); err != nil {
		t.Fatalf("whoami: %v", err)
	}
	return code
}
