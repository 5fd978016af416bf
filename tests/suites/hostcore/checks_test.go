package hostcore

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
)

// withField is page with its focused field changed.
func withField(page fakeext.Page, f fill.FieldInfo) fakeext.Page {
	page.Field = f
	return page
}

// inFrames is a login page on origin inside frames from ancestors
// (nearest first).
func inFrames(origin string, ancestors ...string) fakeext.Page {
	p := loginPage(origin)
	p.Frame = 4
	p.Origins = append(p.Origins, ancestors...)
	return p
}

func TestRefusedBeforeThePrompt(t *testing.T) {
	const notGithub = "which is not github.com or a subdomain of it; nothing was asked"
	cases := []struct {
		name    string
		service string
		page    fakeext.Page
		args    []string
		detail  string
	}{
		{"wrong origin", "github.com", loginPage("https://gitlab.com"), nil,
			"The focused field is on https://gitlab.com, " + notGithub},
		{"look-alike suffix", "github.com", loginPage("https://github.com.evil.test"), nil,
			"The focused field is on https://github.com.evil.test, " + notGithub},
		{"look-alike prefix", "github.com", loginPage("https://evilgithub.com"), nil,
			"The focused field is on https://evilgithub.com, " + notGithub},
		{"http on a public host", "github.com", loginPage("http://github.com"), nil,
			"is not https (plain http is allowed only on localhost and loopback addresses)"},
		{"other port on a public host", "github.com", loginPage("https://github.com:8443"), nil,
			"is on port 8443, and a service without a port covers only the default port (ask for github.com:8443 to fill there)"},
		{"service with a port, other port", "github.com:8443", loginPage("https://github.com:9443"), nil,
			"is on port 9443, not github.com:8443's port 8443"},
		{"cross-origin frame chain", "github.com", inFrames("https://github.com", "https://evil.test"), nil,
			"inside a page from https://evil.test"},
		{"frame of the service inside a foreign top page", "github.com", inFrames("https://github.com", "https://github.com", "https://evil.test"), nil,
			"inside a page from https://evil.test"},
		{"username field focused", "github.com", withField(loginPage("https://github.com"), fill.FieldInfo{Kind: fill.FieldOther}), nil,
			"is not a password field"},
		{"nothing focused", "github.com", withField(loginPage("https://github.com"), fill.FieldInfo{Kind: fill.FieldNone}), nil,
			"Nothing is focused on https://github.com"},
		{"hidden field", "github.com", withField(loginPage("https://github.com"), fill.FieldInfo{Kind: fill.FieldPassword, Problem: "hidden"}), nil,
			"is hidden, so it cannot be filled safely"},
		{"one-time code asked, password focused", "github.com", loginPage("https://github.com"), []string{"--field", "otp"},
			"is a password field, but a one-time code was asked for"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, setup{page: c.page})
			r.behave(answers(r.secret)) // were a prompt opened, this would fill it
			got := r.fill(c.service, c.args...)
			r.expect(got, fill.StatusRefused, c.detail)
			if got.res.Origin != c.page.Origins[0] {
				t.Errorf("result origin %q, want the focused frame's %q", got.res.Origin, c.page.Origins[0])
			}
			r.expectExtSaw(1, "inspect", "outcome")
			if n := r.promptCount(); n != 0 {
				t.Errorf("%d prompts opened for a refused request", n)
			}
			r.expectNothingInserted()
			r.expectAudit(got)
		})
	}
}

// fillsAt fills the page at each origin for its service, as the person
// answers, in a scenario of its own, and checks the result names the
// service (lowercase), the origin and the field.
func fillsAt(t *testing.T, cases []struct{ service, origin string }) {
	for _, c := range cases {
		t.Run(c.service, func(t *testing.T) {
			r := newRig(t, setup{page: loginPage(c.origin)})
			r.behave(answers(r.secret))
			got := r.fill(c.service)
			r.expect(got, fill.StatusOK, "inserted into the focused password field")
			r.expectWhere(got, strings.ToLower(c.service), c.origin, fill.FieldPassword)
			r.expectInserted(r.secret)
		})
	}
}

func TestLoopbackOverHTTP(t *testing.T) {
	// Plain http and another port are fine on loopback.
	fillsAt(t, []struct{ service, origin string }{
		{"localhost", "http://localhost:8080"},
		{"127.0.0.1", "http://127.0.0.1:3000"},
	})
}

// TestServiceWithAPort: a service that names its port fills a page on
// exactly that port, a router's IP address included (the refusals for
// other ports are in TestRefusedBeforeThePrompt).
func TestServiceWithAPort(t *testing.T) {
	fillsAt(t, []struct{ service, origin string }{
		{"nas.lan:8443", "https://nas.lan:8443"},
		{"NAS.lan:8443", "https://nas.lan:8443"},
		{"192.168.1.1:8443", "https://192.168.1.1:8443"},
		{"localhost:3000", "http://localhost:3000"},
	})
}

func TestBarePublicSuffixRefused(t *testing.T) {
	r := newRig(t, setup{page: loginPage("https://github.io")})
	r.behave(answers(r.secret))
	suffixes := []string{"com", "co.uk", "github.io"}
	for _, s := range suffixes {
		// `fillgate fill` checks nothing itself: the host's door refuses.
		got := r.fill(s)
		r.expect(got, fill.StatusRefused, "is a public suffix (like com, co.uk or github.io)")
	}
	// A client that is not the CLI gets the same answer from the host.
	for _, s := range suffixes {
		res, err := agentsock.Fill(r.ctx, r.dirs.socketDir(t), fill.Request{Service: s}, "hostcore test", nil)
		if err != nil {
			t.Fatalf("agentsock.Fill: %v", err)
		}
		r.expectResult(res, fill.StatusRefused, "is a public suffix")
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		r.keep("agentsock.Fill result", b)
	}
	// The extension is asked nothing, and told each outcome (the popup's
	// history).
	r.expectExtSaw(2*len(suffixes), "outcome", "outcome", "outcome", "outcome", "outcome", "outcome")
	r.expectNothingInserted()
	if n := len(r.auditEntries()); n != 2*len(suffixes) {
		t.Errorf("%d audit entries, want one per request (each reached the host)", n)
	}
}

func TestPaused(t *testing.T) {
	r := newRig(t, setup{page: loginPage("https://github.com"), paused: true})
	r.behave(answers(r.secret))
	got := r.fill("github.com")
	r.expect(got, fill.StatusRefused, "fills are paused in the fillgate extension; switch them back on")
	r.expectExtSaw(1, "inspect", "outcome")
	r.expectNothingInserted()

	// Switched back on, the same request goes through.
	r.ext.SetPaused(false)
	got = r.fill("github.com")
	r.expect(got, fill.StatusOK, "inserted")
	r.expectInserted(r.secret)
}

// changes is the page changing while the human answers the prompt.
func changes(change func(p *fakeext.Page)) human {
	return func(_ context.Context, r *rig, _ prompted) error {
		r.ext.Update(change)
		return nil
	}
}

// pauses is the user pausing fills in the popup while the prompt is open.
func pauses() human {
	return func(_ context.Context, r *rig, _ prompted) error {
		r.ext.SetPaused(true)
		return nil
	}
}

func TestRefusedAtInsert(t *testing.T) {
	// The extension walks the frame chain again only for a field in a
	// frame (in the top frame, focus gone into a frame is focus moved).
	framed := inFrames("https://github.com", "https://github.com")
	cases := []struct {
		name   string
		change human
		detail string
		page   *fakeext.Page // nil: a login page in the top frame
	}{
		{"focus moved to another field", changes(func(p *fakeext.Page) { p.Element = "username-input" }),
			"nothing was inserted: focus moved to another field while the prompt was open", nil},
		{"navigated to another origin", changes(func(p *fakeext.Page) {
			p.Origins, p.Element = []string{"https://evil.test"}, "evil-password"
		}), "nothing was inserted: the page navigated to another origin", nil},
		{"page re-rendered", changes(func(p *fakeext.Page) { p.Detached = true }),
			"nothing was inserted: the field is gone", nil},
		{"focus moved to another frame", changes(func(p *fakeext.Page) { p.Frame = 9 }),
			"nothing was inserted: focus moved to another frame", &framed},
		{"field became another kind", changes(func(p *fakeext.Page) { p.Field.Kind = fill.FieldOther }),
			"nothing was inserted: the focused field is no longer the kind", nil},
		{"field became hidden", changes(func(p *fakeext.Page) { p.Field.Problem = "hidden" }),
			"nothing was inserted: the field is no longer visible and enabled", nil},
		{"paused meanwhile", pauses(),
			"nothing was inserted: fills are paused in the fillgate extension", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page := loginPage("https://github.com")
			if c.page != nil {
				page = *c.page
			}
			r := newRig(t, setup{page: page})
			r.behave(then(c.change, answers(r.secret)))
			got := r.fill("github.com")
			r.expect(got, fill.StatusRefused, c.detail)
			r.expectExtSaw(1, "inspect", "open_prompt", "close_prompt", "insert", "outcome")
			r.expectNothingInserted()
			r.expectAudit(got)
		})
	}
}

// TestCleanRoomRefusesBeforeAsking: in a browser a program drives, under
// the person's default (driven = "clean-room"), fillgate logs in in a
// clean room and never types into the page; what the clean room cannot do
// is refused once the host knows the browser is driven, before anything
// is asked or inserted, with the way to allow it: a value left in the
// field (then none), and a field in a frame (the room logs in only in a
// page's top frame). The host may start its clean room's browser (a
// headless Chromium, where one is installed) while the page is inspected;
// the refusal must still reach the agent at once, and the room's browser
// end with the request.
func TestCleanRoomRefusesBeforeAsking(t *testing.T) {
	for _, c := range []struct {
		name   string
		page   fakeext.Page
		args   []string
		detail string
	}{
		{"then none", loginPage("https://github.com"), []string{"--then", "none"},
			"nothing stays in the agent's page there, so the value cannot be left in the field (then none)"},
		{"field in a frame", inFrames("https://github.com", "https://github.com"), nil,
			"the login field is in a frame (https://github.com inside https://github.com), and the clean room logs in only in a page's top frame"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, setup{browser: drivenCleanRoom, page: c.page})
			r.behave(answers(r.secret)) // were a prompt opened, this would fill it
			got := r.fill("github.com", c.args...)
			r.expect(got, fill.StatusRefused, c.detail)
			if !strings.Contains(got.res.Detail, `driven = "in-page" for github.com`) {
				t.Errorf("the refusal does not say how to allow it: %s", got.res.Detail)
			}
			if got.res.HandedOver != nil || got.res.Submitted != nil {
				t.Errorf("a refusal says handed over or submitted: %s", r.safe(string(got.stdout)))
			}
			r.expectExtSaw(1, "inspect", "outcome")
			if n := r.promptCount(); n != 0 {
				t.Errorf("%d prompts opened for a refused request", n)
			}
			r.expectNothingInserted()
			r.expectAudit(got)
		})
	}
}
