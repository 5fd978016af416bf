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
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/loginserver"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

// TestChromiumSaved runs remembered secrets end to end in real Chromium
// with the real extension, the real prompt and a real gnome-keyring:
// remember from the prompt, approve the saved value, a lease (a fill with
// a notification and no prompt, ended from the popup), approval = none,
// several accounts, and a keyring locked mid-fill.
func TestChromiumSaved(t *testing.T) {
	ctx := testContext(t, 6*time.Minute)
	r := newRig(t)
	ss := secretservice.Start(t)
	r.env = append(r.env, "DBUS_SESSION_BUS_ADDRESS="+os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	ch := startChromiumIn(t, ctx, r, "profile")
	u, _ := url.Parse(ch.origin1)
	exact := svc + ":" + u.Port() // approval = "none" holds for exactly the page's host and port
	tb := ch.openTab(t, ch.origin1+"/password")
	// focus puts the account into the page's user field (what the page
	// shows) and focuses the empty password field.
	focus := func(account string) {
		t.Helper()
		if !tb.eval(`(() => { const pw = document.getElementById("pw"); document.getElementById("user").value = ` +
			fmt.Sprintf("%q", account) + `; pw.value = ""; pw.focus(); return document.activeElement === pw; })()`) {
			t.Fatal("focus the password field")
		}
	}
	// sentThenCleared checks that a fill of a saved value submitted it and
	// left nothing in the field: a saved value never stays in the page,
	// whatever the agent asked (these requests ask for --then none).
	sentThenCleared := func(t *testing.T, secret []byte, what string) {
		t.Helper()
		if !tb.holds(sentWith, secret) || !tb.eval(`document.getElementById("pw").value === ""`) {
			t.Errorf("%s: the form was not submitted with the value, or the field still holds something", what)
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

	t.Run("remember from the prompt", func(t *testing.T) {
		focus("alice@example.com")
		a, p := ch.askCDP(t, "--service", svc, "--then", "none")
		p.says("As", "alice@example.com", "Remember it in the system keychain")
		p.click("remember")
		p.click("value")
		p.send(alice)
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "it was remembered in the OS keyring, as the person asked")
		done(t, a, res, alice)
		if !tb.holds(pwHolds, alice) {
			t.Error("value differed")
		}
		out, err := exec.Command("secret-tool", "lookup", "service", "fillgate", "username", "password 127.0.0.1 alice@example.com").Output()
		if err != nil || !bytes.Equal(out, alice) {
			t.Error("secret-tool: the remembered password differed (or is missing)")
		}
		items, _ := ch.saved(t)
		if len(items) != 1 || items[0]["service"] != svc || items[0]["account"] != "alice@example.com" {
			t.Errorf("fillgate saved lists %v", items)
		}
		ch.closed(t, p)
	})

	t.Run("approve the saved value", func(t *testing.T) {
		focus("alice@example.com")
		a, p := ch.askCDP(t, "--service", svc, "--then", "none")
		p.says("Use the saved password", "from the OS keyring, as alice@example.com", "Or type another password")
		p.click("approve")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "the value came from the OS keyring, approved in the prompt",
			"fillgate leaves only a value the person typed")
		done(t, a, res, alice)
		sentThenCleared(t, alice, "approved")
		ch.closed(t, p)
	})

	t.Run("lease", func(t *testing.T) {
		ch.policy(t, "[service.\"127.0.0.1\"]\napproval = \"lease\"\nlease = \"10m\"\n")
		focus("alice@example.com")
		a, p := ch.askCDP(t, "--service", svc, "--then", "none")
		p.click("approve")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "without a prompt until")
		ch.closed(t, p)

		notices := ch.notifications(t)
		focus("alice@example.com")
		a, n := ch.request(t, "--service", svc, "--then", "none")
		res, code = a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "the value came from the OS keyring, under a lease, with a notice and no prompt")
		done(t, a, res, alice)
		noPrompt(t, ch, n)
		sentThenCleared(t, alice, "under a lease")
		if got := ch.notifications(t); got != notices+1 {
			t.Errorf("%d browser notifications, want %d", got, notices+1)
		}
		if _, leases := ch.saved(t); len(leases) != 1 || leases[0]["account"] != "alice@example.com" {
			t.Errorf("fillgate saved lists the leases %v", leases)
		}

		// The person ends it in the popup; the next fill asks again.
		pop := ch.popup(t)
		if _, err := chromedp.Run(pop.ctx, chromedp.Poll[bool](`!document.getElementById("leasebox").hidden &&
			document.getElementById("leases").textContent.includes("127.0.0.1 · password as alice@example.com")`,
			chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("the popup does not list the lease: %v", err)
		}
		pop.eval(`document.querySelector("#leases button").click(), true`)
		if err := chromedp.Cancel(pop.ctx); err != nil { // closes the popup; the login tab is in front again
			t.Fatal(err)
		}
		if _, err := chromedp.Call(tb.ctx, cdppage.BringToFront, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
		deadline, stop := context.WithTimeout(ctx, 30*time.Second)
		defer stop()
		if poll.Until(deadline, 50*time.Millisecond, func() (bool, error) {
			return len(ch.hostStatus(t, deadline).Leases) == 0, nil
		}) != nil {
			t.Fatal("the host still has the lease the popup ended")
		}
		focus("alice@example.com")
		a, p = ch.askCDP(t, "--service", svc, "--then", "none")
		p.clickCancel()
		res, code = a.result(t, ctx)
		wantResult(t, res, code, fill.StatusCancelled, svc, fill.FieldPassword)
		ch.closed(t, p)
	})

	t.Run("approval none", func(t *testing.T) {
		ch.policy(t, fmt.Sprintf("[service.%q]\napproval = \"none\"\n", exact))
		notices := ch.notifications(t)
		focus("alice@example.com")
		a, n := ch.request(t, "--service", svc, "--then", "none")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "with a notice and no prompt (approval = none)")
		done(t, a, res, alice)
		noPrompt(t, ch, n)
		sentThenCleared(t, alice, "approval none")
		if ch.notifications(t) != notices+1 {
			t.Errorf("%d notifications, want %d", ch.notifications(t), notices+1)
		}
		// Nothing saved for the account the page shows: failed, with the fix.
		focus("carol")
		a, n = ch.request(t, "--service", svc, "--then", "none")
		res, code = a.result(t, ctx)
		wantResult(t, res, code, fill.StatusFailed, svc, fill.FieldPassword, "fillgate remember --service 127.0.0.1 --account ACCOUNT")
		noPrompt(t, ch, n)
		if !tb.eval(`document.getElementById("pw").value === ""`) {
			t.Error("something was typed")
		}
	})

	t.Run("several accounts", func(t *testing.T) {
		ch.policy(t, "")
		bob := ch.secret(t)
		secrets = append(secrets, bob)
		if out, _, code := ch.cliIn(t, ch.ctx, bob, "remember", "--service", svc, "--account", "bob", "--stdin"); code != 0 {
			t.Fatalf("fillgate remember: %s", out)
		}
		focus("")
		a, p := ch.askCDP(t, "--service", svc, "--then", "none")
		p.says("Which account?", "alice@example.com", "bob")
		p.click("account-1")
		p.click("approve")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "approved in the prompt")
		done(t, a, res, bob)
		sentThenCleared(t, bob, "the picked account's value")
		ch.closed(t, p)
	})

	// A code computed at fill time from a seed remembered in the keyring,
	// which the login site checks with its own TOTP implementation.
	t.Run("one-time code from a remembered seed", func(t *testing.T) {
		login := loginserver.Start(t, "127.0.0.3")
		key := make([]byte, 20)
		if _, err := rand.Read(key); err != nil {
			t.Fatal(err)
		}
		login.SetTOTP(key)
		seed := []byte("otpauth://totp/Login:ada?secret=" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(key) + "&issuer=Login")
		secrets = append(secrets, seed)
		ch.secrets = append(ch.secrets, scanned{value: seed, owner: t.Name()})
		if out, _, code := ch.cliIn(t, ch.ctx, seed, "remember", "--service", "127.0.0.3", "--field", "otp", "--account", "ada", "--stdin"); code != 0 {
			t.Fatalf("fillgate remember: %s", out)
		}
		otp := ch.open(t, login.URL+"/totp")
		otp.focus(`document.getElementById("otp")`)
		a, p := ch.askCDP(t, "--service", "127.0.0.3", "--field", "otp")
		p.says("One-time code for 127.0.0.3", "from the OS keyring, as ada")
		p.click("approve")
		res, code := a.result(t, ctx)
		if res.Status != fill.StatusOK || code != 0 || !strings.Contains(res.Detail, "the value came from the OS keyring, approved in the prompt") {
			t.Fatalf("result %+v, exit code %d", res, code)
		}
		wantSubmit(t, res, true, true)
		waitWelcome(otp)
		if login.TOTPAccepted() != 1 {
			t.Errorf("the login site accepted %d codes, want the one", login.TOTPAccepted())
		}
		ch.check(t, seed, a, res)
		ch.closed(t, p)
	})

	t.Run("keyring locked mid-fill", func(t *testing.T) {
		focus("alice@example.com")
		a, p := ch.askCDP(t, "--service", svc, "--then", "none")
		p.says("from the OS keyring")
		secretservice.Lock(t)
		p.click("approve")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusFailed, svc, fill.FieldPassword, "the OS keyring is locked; unlock it")
		done(t, a, res, alice)
		if !tb.eval(`document.getElementById("pw").value === ""`) {
			t.Error("something was typed")
		}
		ch.closed(t, p)
	})

	finish(t, ch)
	for _, s := range secrets {
		leakscan.Dirs(t, s, ss.Data)
	}
}

// policy rewrites the policy file: the tests' own settings and extra.
func (ch *chromium) policy(t testing.TB, extra string) {
	t.Helper()
	ch.writePolicy(t, testPolicy+extra)
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

// popup opens the extension's toolbar popup in a tab of its own.
func (ch *chromium) popup(t testing.TB) tab {
	t.Helper()
	return ch.openTab(t, manifest.ExtensionOrigin+"popup.html")
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
	info, err := browser.WaitTarget(ch.ctx, ch.bctx, "service_worker", manifest.ExtensionOrigin)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := chromedp.NewContext(ch.bctx, chromedp.WithTargetID(info.TargetID), chromedp.WithDetachOnCancel())
	defer cancel()
	n, err := chromedp.Run(wctx, chromedp.Evaluate[int](
		notificationsShown, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("ask the service worker for its notifications: %v", err)
	}
	return n
}
