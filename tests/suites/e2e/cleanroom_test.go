//go:build linux

package e2e

import (
	"bytes"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// runCleanRoom fills the recording login site in b as the person's policy
// has it by default for a browser a program drives (driven =
// "clean-room", set here for the login site's service over the suite's
// in-page consent): Chromium is logged in to by fillgate's clean room (a
// headless browser only fillgate holds), which receives the value instead
// of the agent's tab; the tab is handed the session and ends where the
// login ended, and never holds or sends the value. What the clean room
// cannot do is refused before anything is asked, with the fix: a value
// left in the field (then none), a login field in a frame, and any fill
// of Firefox, whose session a Chromium clean room cannot make.
func runCleanRoom(t *testing.T, b testBrowser) {
	login, other := loginSite(t)
	f := &filler{b: b, login: login, other: other}
	s := b.session()
	s.writePolicy(t, testPolicy+cleanRoomFor(loginSvc))
	defer s.writePolicy(t, testPolicy)
	for _, c := range cleanRooms {
		t.Run(c.name, func(t *testing.T) { c.run(t, f) })
	}
}

// cleanRooms run in each browser (TestChromium and TestFirefox's "clean
// room").
var cleanRooms = []afterFill{
	{"a typed password", func(t *testing.T, f *filler) {
		s := f.b.session()
		secret := f.right(s.secret(t))
		tb := f.b.open(t, f.login.URL+"/signin")
		tb.focus(pw)
		if _, ok := f.b.(*firefox); ok {
			refusedBeforeAsking(t, f, tb, secret, nil,
				"the agent's browser is Firefox, and fillgate's clean room is a Chromium-family browser whose session Firefox would not take as its own",
				`set driven = "in-page" for 127.0.0.3 in your policy`)
			return
		}
		// What the agent's tab sends, as its own browser tools would see it.
		sent := browser.Record(t, tb.(tab).ctx)
		a, p := ask(t, f.b, "--service", loginSvc)
		p.says("fillgate logs in for it in a browser of its own: what you type or approve never enters the agent's browser")
		p.send(secret)
		res, code := s.outcome(t, secret, a)
		s.closed(t, p)
		wantResult(t, res, code, fill.StatusOK, loginSvc, fill.FieldPassword, "logged in in fillgate's clean room")
		if res.HandedOver == nil || !*res.HandedOver || res.TabOrigin != f.login.URL {
			t.Errorf("result %+v; want the session handed over to the tab, which shows %s", res, f.login.URL)
		}
		f.loggedInOnce(t, "/classic/login", secret)
		tb.waitFor(`location.href === "` + f.login.URL + `/welcome" && document.getElementById("welcome") !== null`)
		if !tb.holds(`function (v) { return !fg.holds(v); }`, secret) {
			t.Error("the agent's tab holds the value")
		}
		for _, post := range sent.Posts(t) {
			t.Errorf("the agent's tab posted to %s", post.URL)
		}
		seen := sent.All(t)
		leakscan.Bytes(t, secret, "what the agent's tab sent", seen)
		if !bytes.Contains(seen, []byte("GET "+f.login.URL+"/welcome\n")) {
			t.Error("control: the recording of the agent's tab does not show it loading the welcome page")
		}
	}},

	{"then none is refused before anything is asked", func(t *testing.T, f *filler) {
		s := f.b.session()
		secret := f.right(s.secret(t))
		tb := f.b.open(t, f.login.URL+"/signin")
		tb.focus(pw)
		refusedBeforeAsking(t, f, tb, secret, []string{"--then", "none"},
			"nothing stays in the agent's page there, so the value cannot be left in the field (then none)",
			`set driven = "in-page" for 127.0.0.3 in your policy`)
	}},

	{"a login field in a frame is refused before anything is asked", func(t *testing.T, f *filler) {
		s := f.b.session()
		secret := f.right(s.secret(t))
		const field = `document.getElementById("fr").contentDocument.getElementById("pw")`
		tb := f.b.open(t, f.login.URL+"/frame-host")
		tb.waitFor(`document.getElementById("fr").contentDocument?.readyState === "complete" && ` + field + ` !== null`)
		tb.focus(field)
		refusedBeforeAsking(t, f, tb, secret, nil,
			"the login field is in a frame ("+f.login.URL+" inside "+f.login.URL+"), and the clean room logs in only in a page's top frame",
			`set driven = "in-page" for 127.0.0.3 in your policy`)
		if !tb.eval(field + `.value === ""`) {
			t.Error("something was typed into the framed field")
		}
	}},
}

// refusedBeforeAsking asks for the login site's password with args, with
// tb's field focused, and expects a refusal whose detail holds each of
// details: no prompt, nothing typed into the page or sent to the site.
func refusedBeforeAsking(t *testing.T, f *filler, tb page, secret []byte, args []string, details ...string) {
	t.Helper()
	s := f.b.session()
	a, n := s.request(t, append([]string{"--service", loginSvc}, args...)...)
	res, code := s.outcome(t, secret, a)
	wantResult(t, res, code, fill.StatusRefused, loginSvc, fill.FieldPassword, details...)
	if res.HandedOver != nil || res.Submitted != nil {
		t.Errorf("a refusal says handed over or submitted: %+v", res)
	}
	noPrompt(t, f.b, n)
	if !tb.eval(`fg.quiet() && fg.allEmpty()`) || f.login.Carrying(secret) != 0 {
		t.Error("something was typed into the page or sent to the site")
	}
}
