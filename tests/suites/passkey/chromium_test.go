//go:build linux

package passkey

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/hostwait"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/rp"
)

// chromiumTab is the site's tab in Chromium, over the test's own CDP
// session, with the extension's service worker to see its arms.
type chromiumTab struct {
	t      testing.TB
	ctx    context.Context
	cdp    context.Context // the tab
	worker context.Context // the extension's service worker
}

// start starts Chromium with the extension and host of `fillgate
// install`, on the site's page, with the person's own platform
// authenticator in the tab.
func start(t testing.TB) *set {
	s := newSet(t, "fgpk-")
	_, ct := s.startChromium(t, "profile", s.site.URL)
	// The person's own passkeys: a platform authenticator, which the
	// test adds over its own CDP session (never fillgate).
	rp.AddPersonsAuthenticator(t, ct.cdp)
	s.tab = ct
	return s
}

// startChromium starts Chromium, headless, on the profile dir under the
// root with the extension and host of `fillgate install`, waits for its
// host to connect, and opens url in a tab the test drives.
func (s *set) startChromium(t testing.TB, dir, url string) (*browser.Chromium, *chromiumTab) {
	t.Helper()
	profile := filepath.Join(s.root.Dir, dir)
	ext := s.install("--browser", "chromium", "--user-data-dir", profile)
	c := browser.StartChromium(t, s.ctx, browser.ChromiumOptions{UserDataDir: profile, Extensions: []string{ext}, Env: s.env})
	bctx := c.Attach(t, s.ctx)
	if hs, err := hostwait.Until(s.ctx, s.root.RunDir, hostwait.One(hostwait.Connected)); err != nil {
		t.Fatalf("no host with the extension connected: %v; last status %+v", err, hs)
	}
	info, err := browser.WaitTarget(s.ctx, bctx, "service_worker", manifest.ExtensionOrigin)
	if err != nil {
		t.Fatal(err)
	}
	worker, _ := chromedp.NewContext(bctx, chromedp.WithTargetID(info.TargetID))
	return c, &chromiumTab{t: t, ctx: s.ctx, cdp: browser.NewTab(t, bctx, url), worker: worker}
}

func (c *chromiumTab) eval(expr string) string {
	c.t.Helper()
	v, err := chromedp.Run(c.cdp, chromedp.Evaluate[string](`(async () => String(await (`+expr+`)))()`, chromedp.EvalAwaitPromise))
	if err != nil {
		c.t.Fatal(err)
	}
	return v
}

func (c *chromiumTab) open(url string) {
	c.t.Helper()
	if err := chromedp.Do(c.cdp, chromedp.Navigate(url)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *chromiumTab) armed(t testing.TB, r *fgrun.Run) {
	t.Helper()
	ctx, cancel := r.Awaiting(c.ctx, 30*time.Second)
	defer cancel()
	if err := poll.Until(ctx, 20*time.Millisecond, func() (bool, error) {
		return chromedp.Run(c.worker, chromedp.Evaluate[bool](`passkeyArms.size === 1`))
	}); err != nil {
		t.Fatalf("the tab was never armed: %v; fillgate printed %s%s", err, r.Stdout(), r.Stderr())
	}
}

// TestChromiumPasskeys: in Chromium, which the test drives over CDP, the
// agents' passkey is refused under the person's default (driven =
// "clean-room"); with driven = "in-page" for the site, the person adds a
// passkey for the agents and the agent signs in with it, approved in the
// native dialog each time, whatever the approval mode (passkeys),
// discoverably, with user verification required, on a page that calls
// get() twice and while a frame of another origin calls get(); the site
// verifies every assertion and its count. A call in a tab nobody armed
// goes to the browser's own authenticator, which still answers, as it
// does for an armed call whose allowCredentials lacks the agents'
// passkey; an rpId the page may not claim is not answered. The private
// key is nowhere but in its keyring item. Last, an assertion fillgate
// signs over the page's real origin is refused by the site when that
// origin is not one it takes.
func TestChromiumPasskeys(t *testing.T) {
	s := start(t)
	ours := passkeys(t, s)
	ct := s.tab.(*chromiumTab)
	// The browser's own answer: a credential of the person's.
	persons := func(outcome string) bool { return strings.HasPrefix(outcome, "credential ") }

	t.Run("not armed: the person's own passkey answers", func(t *testing.T) {
		count := s.site.SignCount(ours)
		if got := s.click("add"); got != "passkey added" {
			t.Fatalf("the browser's own create: the page says %q", got)
		}
		if got := s.click("signin"); got != "welcome ada" {
			t.Fatalf("the browser's own get: the page says %q", got)
		}
		if last, n := s.lastLogin(t, ours); bytes.Equal(last.CredentialID, ours) || n != count {
			t.Fatalf("the site's last login %+v used the agents' passkey", last)
		}
	})
	t.Run("an rpId the page may not claim", func(t *testing.T) {
		count := s.site.SignCount(ours)
		s.policy("each")
		r := s.signIn(t)
		s.approve(t, r)
		s.armed(t, r)
		_, _ = chromedp.Run(ct.cdp, chromedp.Evaluate[bool](`navigator.credentials.get({ publicKey: { challenge: new Uint8Array(32), rpId: "example.com" } })
			.then(() => { document.getElementById("status").textContent = "answered"; }, (e) => { document.getElementById("status").textContent = "error: " + e.name; }), true`))
		s.result(t, r, fill.StatusRefused, "may not claim")
		if s.site.SignCount(ours) != count {
			t.Fatal("the agents' passkey signed")
		}
	})
	t.Run("discoverable", func(t *testing.T) { discoverable(t, s, ours) })
	t.Run("user verification required", func(t *testing.T) { uvRequired(t, s, ours) })
	t.Run("get() twice", func(t *testing.T) { twice(t, s, ours, persons) })
	mirror := s.site.Mirror(t)
	// Chromium's own WebAuthn refuses the frame's call (the frame does
	// not have the focus), in its own words, not the door's.
	chromiums := func(outcome string) bool {
		return strings.HasPrefix(outcome, "NotAllowedError: ") && strings.Contains(outcome, "See: https://www.w3.org/TR/webauthn")
	}
	t.Run("a frame of another origin", func(t *testing.T) { crossOriginFrame(t, s, mirror, ours, chromiums) })
	t.Run("allowCredentials without the agents' passkey", func(t *testing.T) {
		// bob's one passkey is the person's own.
		s.setUser("bob")
		defer s.setUser("ada")
		if got := s.click("add"); got != "passkey added" {
			t.Fatalf("the browser's own create for bob: the page says %q", got)
		}
		s.policy("each")
		count := s.site.SignCount(ours)
		r, got := s.press(t, true)
		if got != "welcome bob" {
			t.Fatalf("bob's sign-in: the page says %q", got)
		}
		s.result(t, r, fill.StatusRefused, "the page asked for other passkeys than the agents'; fillgate did not answer it and let the browser's own passkeys answer")
		if last, n := s.lastLogin(t, ours); last.User != "bob" || bytes.Equal(last.CredentialID, ours) || n != count {
			t.Fatalf("the site's last login %+v, count %d; want bob's own passkey, ours still at %d", last, n, count)
		}
	})

	// `fillgate saved` lists it.
	out, _, code := s.cli("saved", "--json")
	var saved struct {
		Items []keychain.Item `json:"items"`
	}
	if code != 0 || json.Unmarshal(out, &saved) != nil || len(saved.Items) != 1 ||
		saved.Items[0] != (keychain.Item{Service: s.svc, Field: keychain.FieldPasskey, Account: "ada"}) {
		t.Fatalf("fillgate saved --json printed %s (exit %d)", out, code)
	}

	s.leakScan(t)

	t.Run("forget", func(t *testing.T) {
		out, _, code := s.cli("forget", "--service", s.svc, "--field", "passkey")
		if code != 0 || !strings.Contains(string(out), "removed the agents' passkey for "+s.svc+" as ada") || !strings.Contains(string(out), "the site still lists") {
			t.Fatalf("fillgate forget printed %s (exit %d)", out, code)
		}
		s.policy("each") // no passkey is kept: nothing to ask about
		r := s.signIn(t)
		s.result(t, r, fill.StatusFailed, "no passkey of the agents' is kept for "+s.svc)
		if s.person.Visible(s.ctx, "^[Pp]inentry") {
			t.Error("a native dialog is open for a passkey that is gone")
		}
	})

	t.Run("an origin the site does not take", func(t *testing.T) { wrongOrigin(t, s, mirror) })
}

// wrongOrigin: the site takes its mirror's origin, and the person adds
// the agents' passkey there (for the mirror's service, as cy); then the
// site takes only its own origin again. The agent's sign-in on the
// mirror is answered by fillgate, over the mirror's real origin, which
// may claim the relying party id, and the site refuses that assertion
// for its origin: the site is a real verifier of what fillgate signs.
func wrongOrigin(t *testing.T, s *set, mirror string) {
	if err := s.site.AcceptOrigins(s.site.URL, mirror); err != nil {
		t.Fatal(err)
	}
	svc := serviceOf(t, mirror)
	s.policyFor(svc, "each")
	s.tab.open(mirror)
	s.setUser("cy")
	add := s.run(t, "passkey", "add", "--service", svc, "--account", "cy", "--json")
	s.approve(t, add)
	s.armed(t, add)
	if got := s.click("add"); got != "passkey added" {
		t.Fatalf("add on the mirror: the page says %q", got)
	}
	if res, _, err := add.Result(s.ctx); err != nil || res.Status != fill.StatusOK || res.Origin != mirror {
		t.Fatalf("add on the mirror: %+v, %v", res, err)
	}
	regs := s.site.Registrations()
	theirs := regs[len(regs)-1]
	if theirs.User != "cy" {
		t.Fatalf("the site registered %+v", theirs)
	}

	if err := s.site.AcceptOrigins(s.site.URL); err != nil {
		t.Fatal(err)
	}
	rejected := len(s.site.Rejections())
	r := s.run(t, "fill", "--service", svc, "--field", "passkey", "--json")
	s.approve(t, r)
	s.armed(t, r)
	if got := s.click("signin"); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, "origin") {
		t.Fatalf("sign-in on the mirror: the page says %q; want the site's refusal of the origin", got)
	}
	if res, _, err := r.Result(s.ctx); err != nil || res.Status != fill.StatusOK || res.Origin != mirror {
		t.Fatalf("sign-in on the mirror: %+v, %v; want fillgate's answer over the mirror's origin", res, err)
	}
	rej := s.site.Rejections()
	if len(rej) != rejected+1 || rej[len(rej)-1].Ceremony != rp.SignIn || !strings.Contains(rej[len(rej)-1].Reason, "Error validating origin") || !strings.Contains(rej[len(rej)-1].Reason, mirror) {
		t.Fatalf("the site's rejections %+v; want one of the mirror's origin", rej[rejected:])
	}
	if n := s.site.SignCount(theirs.CredentialID); n != 0 {
		t.Fatalf("the site counts %d for cy's passkey after refusing its assertion", n)
	}
}
