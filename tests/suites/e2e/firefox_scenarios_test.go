//go:build linux

package e2e

import (
	"encoding/json"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
)

// firefoxScenario is a scenario that runs in Firefox only.
type firefoxScenario struct {
	name string
	run  func(t *testing.T, fx *firefox)
}

// firefoxOnly are the scenarios TestFirefox runs after the shared ones,
// in this order: the last removes the add-on.
var firefoxOnly = []firefoxScenario{
	// The host says the browser can be driven for its command line
	// (--remote-debugging-port), its live WebDriverBiDiServer.json, and
	// navigator.webdriver, which Firefox shows in the extension's
	// background script while its Remote Agent runs. Firefox has no
	// chrome.debugger, and that alone is no reason.
	{"firefox only: the host says it can be driven", func(t *testing.T, fx *firefox) {
		fx.setPrompt(t, "auto")
		defer fx.writePolicy(t, testPolicy)
		d := fx.driveByCLI(t, fx.ctx, "auto")
		if !d.Driven || len(d.Reasons) != 3 || d.Reasons[0] != "the browser was started with --remote-debugging-port (WebDriver BiDi)" ||
			!strings.HasPrefix(d.Reasons[1], "a WebDriver BiDi endpoint is live on 127.0.0.1:") || !strings.HasSuffix(d.Reasons[1], " (WebDriverBiDiServer.json)") ||
			d.Reasons[2] != "navigator.webdriver is on (automation)" {
			t.Fatalf("fillgate status --json says drive %+v; want driven for the flag, the live endpoint and navigator.webdriver", d)
		}
	}},

	// While the prompt is open (the window on top: Firefox's
	// getLastFocused returns it whatever windowTypes says), the active tab
	// is still the login page's: `fillgate status` names it, never the
	// prompt, and a request for another service is refused for the login
	// page, without a second prompt.
	{"firefox only: second request while the prompt is open", func(t *testing.T, fx *firefox) {
		secret := fx.secret(t)
		tb := loginFocused(t, fx)
		a, p := ask(t, fx, "--service", svc, "--then", "none")
		promptOrigin := fx.prompts.Window(p.windowID()).Origin
		out, errOut, code := fx.cli(t, fx.ctx, "status", "--json")
		var listed []agentsock.HostStatus
		if code != 0 || json.Unmarshal(out, &listed) != nil || len(listed) != 1 {
			t.Fatalf("fillgate status --json exited %d: %s%s", code, out, errOut)
		}
		if at := listed[0].ActiveTab; at == nil || at.Origin != fx.origin1 || at.Field != fill.FieldPassword ||
			strings.Contains(string(out), promptOrigin) {
			t.Errorf("with the prompt open, status lists the active tab %+v; want %s with a password field, never the prompt", at, fx.origin1)
		}
		b, m := fx.request(t, "--service", "127.0.0.2")
		res, code := b.result(t, fx.ctx)
		wantResult(t, res, code, fill.StatusRefused, "127.0.0.2", fill.FieldPassword, "The focused field is on "+fx.origin1+",")
		if strings.Contains(res.Detail, promptOrigin) || fx.prompts.Count() != m {
			t.Errorf("the second request saw the prompt: %+v", res)
		}
		fx.scan(t, secret, b, fx.host.PID)
		fx.audited(t, res)

		sentToField(t, fx, tb, a, p, secret)
	}},

	// Failed: the host dies while the prompt is open. The agent gets an
	// answer (never a hang), the prompt closes, nothing is typed, and the
	// extension starts a new host that serves the next request.
	{"firefox only: host killed", func(t *testing.T, fx *firefox) {
		secret := fx.secret(t)
		tb := loginFocused(t, fx)
		a, p := ask(t, fx, "--service", svc)
		p.typeSecret(secret)
		old := fx.host.PID
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		fx.hostKilled = true
		res, code := a.result(t, fx.ctx)
		if res.Status != fill.StatusFailed || code != fill.StatusFailed.ExitCode() || !strings.Contains(res.Detail, "host") {
			t.Errorf("with its host killed the agent got %+v (exit %d); want failed, naming the host", res, code)
		}
		fx.closed(t, p)
		untouched(t, tb)
		waitGone(t, fx.ctx, old, "the killed host")
		fx.host = fx.nextHost(t, old)
		fx.scan(t, secret, a, 0) // the killed host recorded nothing

		secret = fx.secret(t)
		a, p = ask(t, fx, "--service", svc, "--then", "none")
		sentToField(t, fx, tb, a, p, secret)
	}},

	// Failed: the person removes the extension while the prompt is open.
	// Firefox closes the native port, the host ends the request as failed
	// and exits; nothing is typed. Nothing is left to close the prompt
	// window (it is the browser's now), but its page is dead: its port
	// answers nothing. This comes last: the add-on stays gone.
	{"firefox only: extension removed", func(t *testing.T, fx *firefox) {
		secret := fx.secret(t)
		tb := loginFocused(t, fx)
		a, p := ask(t, fx, "--service", svc)
		p.typeSecret(secret)
		if err := fx.ff.Call(fx.ctx, "webExtension.uninstall", map[string]any{"extension": manifest.FirefoxID}, nil); err != nil {
			t.Fatalf("remove the add-on: %v", err)
		}
		res, code := a.result(t, fx.ctx)
		wantResult(t, res, code, fill.StatusFailed, svc, fill.FieldPassword, "browser")
		waitGone(t, fx.ctx, fx.host.PID, "the host of the removed add-on")
		fx.scan(t, secret, a, 0)
		fx.audited(t, res)
		untouched(t, tb)
		addr := strings.TrimPrefix(fx.prompts.Window(p.windowID()).Origin, "http://")
		if c, err := net.DialTimeout("tcp", addr, 10*time.Second); err == nil {
			c.Close()
			t.Errorf("the prompt's port %s still answers after its host exited", addr)
		}
		if err := fx.ff.Call(fx.ctx, "browsingContext.close", map[string]any{"context": p.windowID()}, nil); err != nil {
			t.Errorf("close the dead prompt window: %v", err)
		}
	}},
}

// sentToField answers prompt p of the request a (with --then none) with
// secret, and checks that the value went into the password field of tb
// and that the prompt closed; then it empties the field: the finish scan
// is the profile's.
func sentToField(t *testing.T, fx *firefox, tb page, a *agent, p prompt, secret []byte) {
	t.Helper()
	p.send(secret)
	res, code := fx.outcome(t, secret, a)
	wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
	if !tb.holds(pwHolds, secret) {
		t.Errorf("value differed")
	}
	forget(tb, pw)
	fx.closed(t, p)
}

// TestFirefoxWithoutFission runs the frame scenarios in a Firefox ESR with
// Fission (site isolation) turned off, as some managed installs have it:
// a cross-site frame then runs in the page's own process, and the
// extension must still tell the frames apart.
func TestFirefoxWithoutFission(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	fx := startFirefox(t, ctx, browser.FirefoxOptions{Prefs: `user_pref("fission.autostart", false);` + "\n"})
	t.Run("same-origin iframe", func(t *testing.T) { sameOriginFrame(t, fx) })
	t.Run("cross-site iframe", func(t *testing.T) { crossSiteFrame(t, fx) })
	finish(t, fx)
}
