//go:build linux

package cleanroom

import (
	"net/url"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/sessionsite"
)

// TestLogins: every login archetype of a site with real server-side
// sessions, on both paths, through the clean room: the site receives the
// value exactly once, the agent's tab ends signed in where the login
// ended, a second request from that tab is authenticated, and the value
// is nowhere in the agent's browser or fillgate's files.
func TestLogins(t *testing.T) {
	onBothPaths(t, func(t *testing.T, r *rig, site *sessionsite.Site) {
		for _, a := range site.Archetypes() {
			t.Run(a.Name, func(t *testing.T) { r.logIn(t, site, a) })
		}
	})
}

// service is the service a login on the page at raw asks for: its host.
func service(t testing.TB, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Hostname()
}

// toLogin opens the archetype's login in a new tab as the agent would,
// types the user name (and goes on, for a two-step login), and focuses
// the password field.
func (r *rig) toLogin(t testing.TB, site *sessionsite.Site, a sessionsite.Archetype) *tab {
	t.Helper()
	start := a.Login
	if a.Name == "oauth" {
		start = site.OAuthStart()
	}
	tb := r.open(t, start)
	if a.Step != "" {
		tb.typeInto(a.Step, sessionsite.User)
		tb.eval(`setTimeout(() => document.getElementById("go").click(), 0), true`, nil)
	} else {
		tb.typeInto("user", sessionsite.User)
	}
	tb.focus(a.Field)
	return tb
}

// typedLogin makes a new secret the site's password, opens a's login page
// in the agent's tab, asks for the password of service as the agent over
// the rig's path, and has the person type the secret in the native
// dialog. It returns the tab, the agent's result and the secret.
func (r *rig) typedLogin(t testing.TB, site *sessionsite.Site, a sessionsite.Archetype, service string) (*tab, fill.Result, []byte) {
	t.Helper()
	secret := r.Secret(t)
	site.SetPassword(secret)
	tb := r.toLogin(t, site, a)
	run := r.fill(t, service)
	run.types(t, secret)
	return tb, run.result(t), secret
}

// logIn runs one archetype's login through the clean room, the person
// typing the password in the native dialog, and checks its outcome.
func (r *rig) logIn(t *testing.T, site *sessionsite.Site, a sessionsite.Archetype) {
	tb, res, secret := r.typedLogin(t, site, a, service(t, a.Login))
	home, _ := url.Parse(a.Home)
	homeOrigin := home.Scheme + "://" + home.Host
	if res.Status != fill.StatusOK || res.HandedOver == nil || !*res.HandedOver || res.TabOrigin != homeOrigin {
		t.Fatalf("%s: %s (handed over %v, tab at %q; want %s)", res.Status, res.Detail, res.HandedOver, res.TabOrigin, homeOrigin)
	}
	sent, want := site.Received(secret), 1
	if a.Name == "hashed" {
		sent, want = site.ReceivedHash(secret)+10*site.Received(secret), 1
	}
	if sent != want || site.Logins(a.Name) != 1 {
		t.Errorf("the site received the value %d times (want %d), logins %d (want 1)", sent, want, site.Logins(a.Name))
	}
	tb.waitFor(`location.href.startsWith(` + quote(a.Home) + `) && document.getElementById("welcome") !== null`)
	r.authenticated(t, tb, a)
	r.scanFillgate(t, secret)
}

// authenticated checks that a second request from the agent's tab is
// signed in: a same-origin fetch of WhoAmI, or, for a login kept in web
// storage, the WhoAmI page loaded in the tab.
func (r *rig) authenticated(t testing.TB, tb *tab, a sessionsite.Archetype) {
	t.Helper()
	if a.WhoAmIPage {
		tb.eval(`location.href = `+quote(a.WhoAmI)+`, true`, nil)
		tb.waitFor(`location.href.startsWith(` + quote(a.WhoAmI) + `) && document.body && document.body.dataset.who !== undefined`)
		var who string
		tb.eval(`document.body.dataset.who`, &who)
		if who != sessionsite.User {
			t.Errorf("the agent's tab is not signed in: %s says %q", a.WhoAmI, who)
		}
		return
	}
	var got struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	tb.eval(`fetch(`+quote(a.WhoAmI)+`, {credentials: "include"}).then(async (r) => ({status: r.status, body: (await r.text()).trim()}))`, &got)
	if got.Status != 200 || !strings.Contains(got.Body, sessionsite.User) {
		t.Errorf("a second request from the agent's tab is not signed in: %s answered %d %q", a.WhoAmI, got.Status, got.Body)
	}
}
