//go:build linux

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/loginserver"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

// TestChromiumSaved runs remembered secrets end to end in real Chromium
// with the real extension, the real prompt and a real gnome-keyring:
// remember from the prompt, approve the saved value, a lease (a fill with
// a notification and no prompt, ended from the toolbar popup), approval =
// none, several accounts, a code from a remembered seed, and a keyring
// locked mid-fill. The browser is driven (the test's debugging port), and
// a saved value never goes into a driven browser's page: every fill here
// logs in in fillgate's clean room (the policy's default, driven =
// "clean-room") on the recording login site, which receives the value
// exactly once per fill, and the agent's tab ends on the page where the
// login ended, never holding or sending the value. Last, with the
// person's consent to in-page fills, a saved value is not used at all:
// the person types.
func TestChromiumSaved(t *testing.T) {
	ctx := testContext(t, 6*time.Minute)
	r := newRig(t)
	ss := secretservice.Start(t)
	r.env = append(r.env, "DBUS_SESSION_BUS_ADDRESS="+os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	ch := startChromiumIn(t, ctx, r, "profile")
	ch.policy(t, "")
	login := loginserver.Start(t, loginSvc)
	u, _ := url.Parse(login.URL)
	exact := loginSvc + ":" + u.Port() // approval = "none" holds for exactly the page's host and port
	tb := ch.openTab(t, login.URL+"/signin")
	// What the agent's tab sends, as the agent's own browser tools would
	// see it: the clean room logs in, so the tab never posts the login.
	sent := browser.Record(t, tb.ctx)
	// focus opens the sign-in page in the agent's tab, puts the account
	// into its user field (what the page shows) and focuses the empty
	// password field.
	focus := func(t *testing.T, account string) {
		t.Helper()
		tb.navigate(login.URL + "/signin")
		if _, err := chromedp.Call(tb.ctx, cdppage.BringToFront, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
		if !tb.eval(`(() => { const pw = document.getElementById("pw"); document.getElementById("user").value = ` +
			fmt.Sprintf("%q", account) + `; pw.focus(); return document.activeElement === pw; })()`) {
			t.Fatal("focus the password field")
		}
	}
	// loggedInByRoom checks what a fill of a saved (or typed) value
	// through the clean room promises, where these checks once looked for
	// the value submitted from the agent's page: the result says the clean
	// room logged in and handed the session to the agent's tab; the login
	// site received the value exactly once more, at its login; the tab
	// shows where the login ended (the welcome page), holds the value in
	// no field and never sent it.
	loggedInByRoom := func(t *testing.T, res fill.Result, secret []byte, logins, carrying int) {
		t.Helper()
		if res.HandedOver == nil || !*res.HandedOver || res.TabOrigin != login.URL ||
			!strings.HasPrefix(res.Detail, "logged in in fillgate's clean room") {
			t.Errorf("result %+v; want a login in the clean room handed over to the tab, which shows %s", res, login.URL)
		}
		if login.Logins("/classic/login", secret) != logins+1 || login.Carrying(secret) != carrying+1 {
			t.Errorf("the login site got the value %d times in %d logins; want once more, in one login",
				login.Carrying(secret)-carrying, login.Logins("/classic/login", secret)-logins)
		}
		tb.waitFor(`location.href === "` + login.URL + `/welcome" && document.getElementById("welcome") !== null`)
		if !tb.holds(`function (v) { return !fg.holds(v); }`, secret) {
			t.Error("the agent's tab holds the value")
		}
		for _, post := range sent.Posts(t) {
			t.Errorf("the agent's tab posted to %s", post.URL)
		}
		seen := sent.All(t)
		leakscan.Bytes(t, secret, "what the agent's tab sent", seen)
		if !bytes.Contains(seen, []byte("GET "+login.URL+"/welcome\n")) {
			t.Error("control: the recording of the agent's tab does not show it loading the welcome page")
		}
	}
	// untypedHere checks that nothing reached the agent's page or the
	// login site since there were logins requests to the login endpoint.
	untypedHere := func(t *testing.T, logins int) {
		t.Helper()
		if !tb.eval(`location.pathname === "/signin" && document.getElementById("pw").value === ""`) ||
			login.Requests("/classic/login") != logins {
			t.Error("something was typed or sent")
		}
	}
	var secrets [][]byte
	done := func(t *testing.T, a *agent, res fill.Result, secret []byte) {
		t.Helper()
		ch.check(t, secret, a, res)
		for _, s := range secrets {
			ch.scanAgentSide(t, s, a, ch.host.PID, ch.browser.Cmd.Process.Pid)
		}
		if strings.Contains(res.Detail, "alice") || strings.Contains(res.Detail, "bob") {
			t.Errorf("the result names the account: %s", res.Detail)
		}
	}
	alice := ch.secret(t)
	secrets = append(secrets, alice)
	login.SetRight(alice)

	t.Run("remember from the prompt", func(t *testing.T) {
		focus(t, "alice@example.com")
		logins, carrying := login.Logins("/classic/login", alice), login.Carrying(alice)
		a, p := ch.askCDP(t, "--service", loginSvc)
		p.says("As", "alice@example.com", "Remember it in the system keychain",
			"fillgate logs in for it in a browser of its own: what you type or approve never enters the agent's browser")
		p.click("remember")
		p.click("value")
		p.send(alice)
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "it was remembered in the OS keyring, as the person asked")
		done(t, a, res, alice)
		loggedInByRoom(t, res, alice, logins, carrying)
		out, err := exec.Command("secret-tool", "lookup", "service", "fillgate", "username", "password 127.0.0.3 alice@example.com").Output()
		if err != nil || !bytes.Equal(out, alice) {
			t.Error("secret-tool: the remembered password differed (or is missing)")
		}
		items, _ := ch.saved(t)
		if len(items) != 1 || items[0]["service"] != loginSvc || items[0]["account"] != "alice@example.com" {
			t.Errorf("fillgate saved lists %v", items)
		}
		ch.closed(t, p)
	})

	t.Run("approve the saved value", func(t *testing.T) {
		focus(t, "alice@example.com")
		logins, carrying := login.Logins("/classic/login", alice), login.Carrying(alice)
		a, p := ch.askCDP(t, "--service", loginSvc)
		p.says("Use the saved password", "from the OS keyring, as alice@example.com", "Or type another password")
		p.click("approve")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "the value came from the OS keyring, approved in the prompt")
		done(t, a, res, alice)
		loggedInByRoom(t, res, alice, logins, carrying)
		if e := ch.lastAudit(t); e.How != fill.HowApproved {
			t.Errorf("the audit log says how %q; want %q", e.How, fill.HowApproved)
		}
		ch.closed(t, p)
	})

	// A saved value never stays in the agent's page, whatever the agent
	// asks: in a driven browser nothing fillgate holds is ever in that
	// page, so --then none is refused before anything is asked or read.
	t.Run("then none is refused before anything is asked", func(t *testing.T) {
		focus(t, "alice@example.com")
		logins := login.Requests("/classic/login")
		a, n := ch.request(t, "--service", loginSvc, "--then", "none")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusRefused, loginSvc, fill.FieldPassword,
			"so the value cannot be left in the field (then none)", `set driven = "in-page" for 127.0.0.3`)
		done(t, a, res, alice)
		noPrompt(t, ch, n)
		untypedHere(t, logins)
	})

	t.Run("lease", func(t *testing.T) {
		ch.policy(t, "[service.\"127.0.0.3\"]\napproval = \"lease\"\nlease = \"10m\"\n")
		focus(t, "alice@example.com")
		logins, carrying := login.Logins("/classic/login", alice), login.Carrying(alice)
		a, p := ch.askCDP(t, "--service", loginSvc)
		p.click("approve")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "without a prompt until")
		loggedInByRoom(t, res, alice, logins, carrying)
		ch.closed(t, p)

		// The same agent process asks again: the lease fills it with a
		// notice and no prompt. (Were a prompt to open after all, nobody
		// answers it: --timeout ends the request soon, and the checks say
		// what went wrong.)
		notices := ch.notifications(t)
		focus(t, "alice@example.com")
		logins, carrying = login.Logins("/classic/login", alice), login.Carrying(alice)
		a, n := ch.request(t, "--service", loginSvc, "--timeout", "15s")
		res, code = a.result(t, ctx)
		if res.Status != fill.StatusOK || code != 0 || !strings.Contains(res.Detail, "the value came from the OS keyring, under a lease, with a notice and no prompt") {
			t.Errorf("under the lease: result %+v, exit code %d; want ok, filled under the lease with a notice and no prompt", res, code)
		} else {
			loggedInByRoom(t, res, alice, logins, carrying)
		}
		done(t, a, res, alice)
		noPrompt(t, ch, n)
		if got := ch.notifications(t); got != notices+1 {
			t.Errorf("%d browser notifications, want %d", got, notices+1)
		}
		if _, leases := ch.saved(t); len(leases) != 1 || leases[0]["account"] != "alice@example.com" {
			t.Errorf("fillgate saved lists the leases %v", leases)
		}

		// The person ends it in the toolbar popup; the next fill asks again.
		pop, closePopup := ch.popup(t)
		if _, err := chromedp.Run(pop.ctx, chromedp.Poll[bool](`!document.getElementById("leasebox").hidden &&
			document.getElementById("leases").textContent.includes("127.0.0.3 · password as alice@example.com")`,
			chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("the popup does not list the lease: %v", err)
		}
		pop.eval(`document.querySelector("#leases button").click(), true`)
		deadline, stop := context.WithTimeout(ctx, 30*time.Second)
		defer stop()
		if poll.Until(deadline, 50*time.Millisecond, func() (bool, error) {
			return len(ch.hostStatus(t, deadline).Leases) == 0, nil
		}) != nil {
			t.Fatal("the host still has the lease the popup ended")
		}
		closePopup()
		focus(t, "alice@example.com") // the login tab is in front again
		a, p = ch.askCDP(t, "--service", loginSvc)
		p.clickCancel()
		res, code = a.result(t, ctx)
		wantResult(t, res, code, fill.StatusCancelled, loginSvc, fill.FieldPassword)
		ch.closed(t, p)
	})

	t.Run("approval none", func(t *testing.T) {
		ch.policy(t, fmt.Sprintf("[service.%q]\napproval = \"none\"\n", exact))
		notices := ch.notifications(t)
		focus(t, "alice@example.com")
		logins, carrying := login.Logins("/classic/login", alice), login.Carrying(alice)
		a, n := ch.request(t, "--service", loginSvc)
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "with a notice and no prompt (approval = none)")
		done(t, a, res, alice)
		noPrompt(t, ch, n)
		loggedInByRoom(t, res, alice, logins, carrying)
		if ch.notifications(t) != notices+1 {
			t.Errorf("%d notifications, want %d", ch.notifications(t), notices+1)
		}
		// Nothing saved for the account the page shows: failed, with the fix.
		focus(t, "carol")
		before := login.Requests("/classic/login")
		a, n = ch.request(t, "--service", loginSvc)
		res, code = a.result(t, ctx)
		wantResult(t, res, code, fill.StatusFailed, loginSvc, fill.FieldPassword, "fillgate remember --service 127.0.0.3 --account ACCOUNT")
		noPrompt(t, ch, n)
		untypedHere(t, before)
	})

	t.Run("several accounts", func(t *testing.T) {
		ch.policy(t, "")
		bob := ch.secret(t)
		secrets = append(secrets, bob)
		if out, _, code := ch.cliIn(t, ch.ctx, bob, "remember", "--service", loginSvc, "--account", "bob", "--stdin"); code != 0 {
			t.Fatalf("fillgate remember: %s", out)
		}
		login.SetRight(bob)
		focus(t, "")
		a, p := ch.askCDP(t, "--service", loginSvc)
		p.says("Which account?", "alice@example.com", "bob")
		p.click("account-1")
		p.click("approve")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "approved in the prompt")
		done(t, a, res, bob)
		loggedInByRoom(t, res, bob, 0, 0) // the picked account's value
		if login.Carrying(alice) != login.Logins("/classic/login", alice) {
			t.Error("the login site got alice's value outside a login")
		}
		login.SetRight(alice)
		ch.closed(t, p)
	})

	// A code computed at fill time from a seed remembered in the keyring,
	// which the login site checks with its own TOTP implementation.
	t.Run("one-time code from a remembered seed", func(t *testing.T) {
		site := loginserver.Start(t, "127.0.0.3")
		key := make([]byte, 20)
		if _, err := rand.Read(key); err != nil {
			t.Fatal(err)
		}
		site.SetTOTP(key)
		seed := []byte("otpauth://totp/Login:ada?secret=" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(key) + "&issuer=Login")
		secrets = append(secrets, seed)
		ch.secrets = append(ch.secrets, scanned{value: seed, owner: t.Name()})
		if out, _, code := ch.cliIn(t, ch.ctx, seed, "remember", "--service", "127.0.0.3", "--field", "otp", "--account", "ada", "--stdin"); code != 0 {
			t.Fatalf("fillgate remember: %s", out)
		}
		otp := ch.openTab(t, site.URL+"/totp")
		otp.focus(`document.getElementById("otp")`)
		a, p := ch.askCDP(t, "--service", "127.0.0.3", "--field", "otp")
		p.says("One-time code for 127.0.0.3", "from the OS keyring, as ada")
		p.click("approve")
		res, code := a.result(t, ctx)
		if res.Status != fill.StatusOK || code != 0 || !strings.Contains(res.Detail, "the value came from the OS keyring, approved in the prompt") {
			t.Fatalf("result %+v, exit code %d", res, code)
		}
		wantSubmit(t, res, true, true)
		if res.HandedOver == nil || !*res.HandedOver || res.TabOrigin != site.URL {
			t.Errorf("result %+v; want the clean room's session handed over to the tab, which shows %s", res, site.URL)
		}
		otp.waitFor(`location.href === "` + site.URL + `/welcome" && document.getElementById("welcome") !== null`)
		if site.TOTPAccepted() != 1 {
			t.Errorf("the login site accepted %d codes, want the one", site.TOTPAccepted())
		}
		ch.check(t, seed, a, res)
		ch.closed(t, p)
	})

	t.Run("keyring locked mid-fill", func(t *testing.T) {
		focus(t, "alice@example.com")
		before := login.Requests("/classic/login")
		a, p := ch.askCDP(t, "--service", loginSvc)
		p.says("from the OS keyring")
		secretservice.Lock(t)
		p.click("approve")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusFailed, loginSvc, fill.FieldPassword, "the OS keyring is locked; unlock it")
		done(t, a, res, alice)
		untypedHere(t, before)
		ch.closed(t, p)
	})

	// With the person's consent to in-page fills (driven = "in-page"),
	// the value goes into the driven page only if the person types it:
	// the saved value, and approval = "none", are not used there; the
	// prompt offers no Approve and says that the program driving the
	// browser can read what is typed.
	t.Run("in-page: the saved value is not used, the person types", func(t *testing.T) {
		ch.policy(t, fmt.Sprintf("[service.%q]\ndriven = \"in-page\"\napproval = \"none\"\n", exact))
		typed := ch.secret(t)
		secrets = append(secrets, typed)
		login.SetRight(typed)
		page := ch.openTab(t, login.URL+"/signin")
		page.focus(pw)
		a, p := ch.askCDP(t, "--service", loginSvc)
		p.says("that program can read this password in the page as it goes in")
		if !p.eval(`document.getElementById("approve") === null && document.getElementById("inpage") !== null`) {
			t.Error("the prompt offers the saved value, or does not warn that the program driving the browser can read it")
		}
		p.send(typed)
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "the form was submitted and the page navigated away")
		done(t, a, res, typed)
		if res.HandedOver != nil {
			t.Errorf("an in-page fill says handed over: %+v", res)
		}
		if e := ch.lastAudit(t); e.How != fill.HowTyped {
			t.Errorf("the audit log says how %q; want %q", e.How, fill.HowTyped)
		}
		waitWelcome(page)
		if login.Logins("/classic/login", typed) != 1 || login.Carrying(typed) != 1 {
			t.Errorf("the login site got the typed value %d times; want once", login.Carrying(typed))
		}
		ch.closed(t, p)
	})

	finish(t, ch)
	for _, s := range secrets {
		leakscan.Dirs(t, s, ss.Data)
	}
}

// policy rewrites the policy file: the tests' own settings (basePolicy),
// with which a browser a program drives is logged in to through the clean
// room (the default, driven = "clean-room"), and extra.
func (ch *chromium) policy(t testing.TB, extra string) {
	t.Helper()
	ch.writePolicy(t, basePolicy+extra)
}

// saved runs `fillgate saved --json`.
func (ch *chromium) saved(t testing.TB) (items []map[string]string, leases []map[string]any) {
	t.Helper()
	out, errOut, code := ch.cli(t, ch.ctx, "saved", "--json")
	var list struct {
		Items  []map[string]string `json:"items"`
		Leases []map[string]any    `json:"leases"`
	}
	if code != 0 || json.Unmarshal(out, &list) != nil {
		t.Fatalf("fillgate saved --json: exit %d: %s%s", code, out, errOut)
	}
	return list.Items, list.Leases
}

// notificationsShown counts the notifications the extension has shown: those
// still on screen and those closed since the first count (the desktop
// closes a notice after a while, and under load that can fall between two
// counts).
const notificationsShown = `(() => {
	if (!globalThis.fillgateTestClosed) {
		globalThis.fillgateTestClosed = { n: 0 };
		chrome.notifications.onClosed.addListener(() => globalThis.fillgateTestClosed.n++);
	}
	return new Promise((resolve) => chrome.notifications.getAll((all) => resolve(Object.keys(all).length + globalThis.fillgateTestClosed.n)));
})()`

// notifications counts the browser notifications the extension shows,
// asking its service worker (Chromium tells their ids only).
func (ch *chromium) notifications(t testing.TB) int {
	t.Helper()
	wctx, detach := ch.worker(t)
	defer detach()
	n, err := chromedp.Run(wctx, chromedp.Evaluate[int](
		notificationsShown, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("ask the service worker for its notifications: %v", err)
	}
	return n
}
