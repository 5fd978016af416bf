//go:build linux

package agents

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/agenttools"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// The titles of fillgate's native dialogs (internal/nativeprompt/texts.go).
const (
	typedTitle = "fillgate — password for "
	savedTitle = "fillgate — use the saved password for "
)

// noPersonNeeded says why a dialog must not show for a fill.
const noPersonNeeded = "the fill needs no person"

// savedSvc is the service of the login site on 127.0.0.2, whose password
// the person has saved in the keyring.
const savedSvc = "127.0.0.2"

// In pinentry-gtk-2's confirmations the buttons are Cancel, then the
// NotOK button ("Type instead"), then OK ("Fill saved password"), and
// Cancel has the focus.
var chooseFillSaved = []string{"Tab", "Tab", "Return"}

// TestAttackAgentsCannotAnswer: the agent's own browser tools, attached
// to the person's browser, attack a fill while it waits for the person,
// on both paths, with the person's default prompt = "auto". The browser
// has a debugging port, so the person answers in the native dialog
// (pinentry on a private X display), never in the browser, and, under the
// person's default driven = "clean-room", fillgate logs in in its clean
// room (a browser of its own) and hands the agent's tab the session:
//
//   - typed: while the dialog is open, the agent lists every page
//     (browser_tabs, list_pages; a raw CDP client and /json/list too):
//     no prompt page; it installs capture-phase key and input listeners
//     in every page it sees and finds nothing to click; the person types
//     in the dialog and the listeners caught nothing; the agent types its
//     own value into the login field; the person presses Enter: the login
//     server receives exactly what the person typed, once, and the
//     agent's tab is handed the session.
//   - saved (approval each): the agent finds nothing to approve with;
//     the person presses Escape in the dialog: cancelled, nothing
//     inserted, the login server received nothing.
//   - no native dialog possible (the policy's pinentry does not exist;
//     on the CDP path also `fillgate fill` without a display): refused
//     with the fix; no prompt page, no dialog.
//   - no person (a lease; approval = "none"): the saved value goes only
//     into the clean room; the login server gets it once, the agent's tab
//     ends on the page the login ended on, and listeners the agent put
//     into the login page beforehand, a DOM read and the tools' snapshots
//     right after the result never show it. Where the agent asks to leave
//     the value in the field (--then none, MCP then: "none"), the clean
//     room leaves nothing in the agent's page, so the request is refused
//     with the fix, before anything is read: nothing inserted, nothing
//     sent, no dialog, no notice.
//
// Every result, the tools' transcripts and files, fillgate's log and
// audit log, and every file under the rig's root are scanned for every
// secret, and nothing of the rig outlives the test.
//
// Not covered here: the person's driven = "in-page", where fillgate types
// a value the person typed into the agent's page. No prompt can prevent
// what script an agent puts into the login page itself then sees (the
// input event's data, the field's value at submit); it can keep it past
// the navigation (sessionStorage, window.name) or send it anywhere. The
// dialog says so, and so does docs/security.md. TestCleanRoomAgentsSeeNothing
// shows that, under the default, the same script sees nothing, and its
// control that in the page it does.
func TestAttackAgentsCannotAnswer(t *testing.T) {
	ctx := testContext(t, 5*time.Minute)
	a := newAttackRig(t, ctx) // t.Setenv: not parallel
	at := &attacker{a: a, tools: a.attachTools(t)}
	mcp := a.fillgateMCP(t, at.tools.d)
	saved := a.Secret(t)
	a.remember(t, savedSvc, saved)
	// The person's two login tabs, in one window, for the whole test: the
	// one in front is the active tab of the window the browser last
	// focused, where the extension looks.
	tab1 := a.open(t, a.site1, "/login")
	tab2 := a.openBeside(t, a.site2, "/login")

	for _, via := range []string{fill.ViaExtension, fill.ViaCDP} {
		parent := func(run *fillRun) int {
			if via == fill.ViaExtension {
				return a.host.PID
			}
			return run.Cmd.Process.Pid
		}
		t.Run(via+"/typed in the dialog; the agent lists, scripts, types and clicks", func(t *testing.T) {
			at.typed(t, tab1, via, parent)
		})
		t.Run(via+"/saved; the agent cannot approve, the person cancels", func(t *testing.T) {
			at.savedCancelled(t, tab2, via, parent)
		})
		t.Run(via+"/no native dialog can be shown: refused", func(t *testing.T) {
			at.noDialog(t, tab1, via)
		})
		t.Run(via+"/no person: the clean room logs in; then none is refused", func(t *testing.T) {
			at.noPerson(t, tab2, via, saved, mcp, parent)
		})
	}
	if n := a.prompts.Count(); n != 0 {
		t.Errorf("%d prompt pages opened in the browser; want none: the person answers outside it", n)
	}
}

// typed: the person types the value in the dialog while the agent
// attacks.
func (at *attacker) typed(t *testing.T, tb *tab, via string, parent func(*fillRun) int) {
	a := at.a
	secret := a.Secret(t)
	decoy := "agent-own-answer-" + randomHex(t) // not a secret; another length
	ready(t, tb)
	m := at.tools.mark(t)
	posted := a.login1.count()
	run := a.fill(t, "--service", svc, "--via", via)
	w := a.awaitDialog(t, run, typedTitle+svc, parent(run))

	// The request is pending: the agent looks everywhere for the prompt.
	pages := at.pages(t)
	at.rawCDP(t)
	at.arm(t, pages)
	at.nothingToClick(t, pages)

	// The person types in the dialog; nothing of it reached any page.
	a.typeIn(t, w, secret)
	if pid, err := a.person.PID(a.ctx, w); err == nil {
		leakscan.Process(t, secret, pid) // the dialog's command line and environment
	}
	leakscan.Process(t, secret, a.host.PID)
	leakscan.Process(t, secret, run.Cmd.Process.Pid)
	for p, got := range at.caught(t, pages) {
		if got != "0" {
			t.Errorf("%s: the agent's listeners caught something (%s) while the person typed in the dialog", p, got)
		}
	}
	// The agent answers for the person where it can: its own value in
	// the field. Then the person presses Enter in the dialog.
	at.typeOwn(t, pages, tb, decoy)
	// Their listeners work: they caught the agent's own typing.
	own := []agentPage{listedTab(t, pages, true, tb), listedTab(t, pages, false, tb)}
	for p, got := range at.caught(t, own) {
		if got != "some" {
			t.Errorf("%s: the agent's listeners did not catch its own typing (%s), so they prove nothing", p, got)
		}
	}
	tb.front()
	a.answer(t, w, "Return")
	a.noDialogUntil(t, run.Done(), "after Enter the dialog came back: what the person typed did not reach it")
	res := run.result(t)
	if res.Status != fill.StatusOK || res.Via != via || res.Origin != a.site1.origin || res.Submitted == nil || !*res.Submitted {
		a.logTail(t)
		t.Fatalf("result %+v; want ok via %s, submitted", res, via)
	}
	wantHandedOver(t, res, via, a.site1.origin)
	if !a.login1.gotOnly(a.ctx, posted, secret) {
		t.Errorf("the login server did not receive exactly what the person typed, once (%d logins)", a.login1.count()-posted)
	}
	// After the fill (the login page has left for the welcome page), the
	// listeners that are still there caught nothing either.
	welcome(t, tb)
	for p, got := range at.caught(t, at.pages(t)) {
		if got == "some" {
			t.Errorf("%s: the agent's listeners caught something after the fill", p)
		}
	}
	at.rawCDP(t)
	if !tb.holdsNowhere(secret) {
		t.Errorf("the page holds the value after the fill")
	}
	at.scan(t, m)
}

// savedCancelled: the person's saved value, approval each; the agent
// finds nothing to approve with and the person cancels in the dialog.
func (at *attacker) savedCancelled(t *testing.T, tb *tab, via string, parent func(*fillRun) int) {
	a := at.a
	ready(t, tb)
	m := at.tools.mark(t)
	posted := a.login2.count()
	run := a.fill(t, "--service", savedSvc, "--via", via)
	w := a.awaitDialog(t, run, savedTitle+savedSvc, parent(run))
	pages := at.pages(t)
	at.rawCDP(t)
	at.nothingToClick(t, pages)
	tb.front()
	a.answer(t, w, "Escape")
	res := run.result(t)
	if res.Status != fill.StatusCancelled || res.Submitted != nil || !strings.Contains(res.Detail, "cancelled") {
		t.Errorf("result %+v; want cancelled, nothing inserted", res)
	}
	if !fieldEmpty(t, tb) {
		t.Errorf("the field is not empty after the person cancelled")
	}
	if n := a.login2.count() - posted; n != 0 {
		t.Errorf("the login server received %d logins after the person cancelled; want none", n)
	}
	at.scan(t, m)
}

// noDialog: no native dialog can be shown: the policy names a pinentry
// that does not exist (both paths), or `fillgate fill`, which shows the
// CDP path's dialog itself, has no display. (The host's display comes
// from the browser's environment; the same check refuses there.)
func (at *attacker) noDialog(t *testing.T, tb *tab, via string) {
	a := at.a
	refused := func(t *testing.T, env []string, fix ...string) {
		ready(t, tb)
		m := at.tools.mark(t)
		posted := a.login1.count()
		kept := a.env
		a.env = env // fill copies it as it starts
		run := a.fill(t, "--service", svc, "--via", via)
		a.env = kept
		a.noDialogUntil(t, run.Done(), "none can be shown")
		wantRefused(t, run.result(t), via, fix...)
		at.pages(t)
		at.rawCDP(t)
		if !fieldEmpty(t, tb) || a.login1.count() != posted {
			t.Errorf("something was inserted or sent after a refusal")
		}
		at.scan(t, m)
	}
	t.Run("no such pinentry", func(t *testing.T) {
		a.writePolicy(attackPolicy("/nonexistent/pinentry", "", ""))
		defer a.writePolicy(attackPolicy(gtk2, "", ""))
		refused(t, a.env, "/nonexistent/pinentry", "fix or remove the policy's pinentry key")
	})
	if via == fill.ViaCDP {
		t.Run("no display", func(t *testing.T) {
			env := slices.DeleteFunc(slices.Clone(a.env), func(kv string) bool { return strings.HasPrefix(kv, "DISPLAY=") })
			refused(t, env, "no desktop display", "DISPLAY", "from your desktop session")
		})
	}
}

// wantRefused checks a refusal because no native dialog can be shown:
// it says so, and how to mend it (each of fix).
func wantRefused(t testing.TB, res fill.Result, via string, fix ...string) {
	t.Helper()
	if res.Status != fill.StatusRefused || res.Via != via || res.Submitted != nil ||
		!strings.Contains(res.Detail, "native dialog") || !strings.Contains(res.Detail, "nothing was asked") {
		t.Errorf("result %+v; want refused via %s: no native dialog can be shown, nothing was asked", res, via)
	}
	for _, f := range fix {
		if !strings.Contains(res.Detail, f) {
			t.Errorf("the refusal does not say %q: %s", f, res.Detail)
		}
	}
}

// wantHandedOver checks the result of a login fillgate made in its clean
// room: ok, submitted there, and the session handed to the agent's tab,
// which now shows origin.
func wantHandedOver(t testing.TB, res fill.Result, via, origin string) {
	t.Helper()
	if res.Status != fill.StatusOK || res.Via != via || res.Submitted == nil || !*res.Submitted ||
		res.HandedOver == nil || !*res.HandedOver || res.TabOrigin != origin || !strings.Contains(res.Detail, "logged in in fillgate's clean room") {
		t.Errorf("result %+v; want ok via %s, logged in in fillgate's clean room and handed over to the agent's tab on %s", res, via, origin)
	}
}

// noPerson: fills of the saved value that no person answers (under a
// lease the person granted in the dialog, and with approval = "none").
// The agent's browser is driven, so they go through the clean room: the
// login server gets the value once, the agent's tab ends on the welcome
// page, and nothing of the value reaches the agent's page. Where the
// agent asks to leave the value in the field, the request is refused.
func (at *attacker) noPerson(t *testing.T, tb *tab, via string, saved []byte, mcp *agenttools.Server, parent func(*fillRun) int) {
	a := at.a
	u, err := url.Parse(a.site2.origin)
	if err != nil {
		t.Fatal(err)
	}
	top := ""
	if via == fill.ViaCDP {
		top = `via = "cdp"` // the MCP tool has no via; the policy picks it
	}
	defer a.writePolicy(attackPolicy(gtk2, "", ""))

	// The person grants a lease in the dialog, for a fill that submits.
	a.writePolicy(attackPolicy(gtk2, top, "[service.\"127.0.0.2\"]\napproval = \"lease\"\nlease = \"10m\"\n"))
	ready(t, tb)
	posted := a.login2.count()
	run := a.fill(t, "--service", savedSvc, "--via", via)
	w := a.awaitDialog(t, run, savedTitle+savedSvc, parent(run))
	a.answer(t, w, chooseFillSaved...)
	a.noDialogUntil(t, run.Done(), "another dialog after Fill saved password")
	res := run.result(t)
	if res.Status != fill.StatusOK || !strings.Contains(res.Detail, "without a prompt until") {
		t.Fatalf("result %+v; want ok, with a lease", res)
	}
	wantHandedOver(t, res, via, a.site2.origin)
	welcome(t, tb)
	if !a.login2.gotOnly(a.ctx, posted, saved) {
		t.Errorf("the login server did not receive the saved value, once")
	}

	// ask makes the agent's request, with then unless it is "".
	type ask func(t *testing.T, then string) fill.Result
	cli := func(t *testing.T, then string) fill.Result {
		args := []string{"--service", savedSvc, "--via", via}
		if then != "" {
			args = append(args, "--then", then)
		}
		run := a.fill(t, args...)
		a.noDialogUntil(t, run.Done(), noPersonNeeded)
		return run.result(t)
	}
	viaMCP := func(t *testing.T, then string) fill.Result {
		args := map[string]any{"service": savedSvc}
		if then != "" {
			args["then"] = then
		}
		call, err := mcp.Start("request_secret", args, agenttools.CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a.noDialogUntil(t, call.Done(), noPersonNeeded)
		raw, err := call.Wait(a.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return mcpResult(t, raw)
	}

	// The clean room logs in: the agent armed its listeners in the login
	// page before it asked, and reads the page right after the result.
	cleanRoom := func(t *testing.T, how string, ask ask) {
		ready(t, tb)
		m := at.tools.mark(t)
		posted := a.login2.count()
		notices := len(a.notices.Notices())
		pw, cd := at.find(t, "s="+tb.token)
		for _, p := range []agentPage{pw, cd} {
			if out, _ := at.eval(t, p, catchAllJS, false); !strings.Contains(out, "armed") {
				t.Fatalf("%s: the listeners were not installed: %s", p, a.Withheld([]byte(out)))
			}
		}
		res := ask(t, "")
		if res.Status != fill.StatusOK {
			a.logTail(t)
			t.Fatalf("result %+v; want ok %s, with no person", res, how)
		}
		wantHandedOver(t, res, via, a.site2.origin)
		if !strings.Contains(res.Detail, how) {
			t.Errorf("the detail %q does not say the value was used %s", res.Detail, how)
		}
		// Right after the result, as an agent reads the page.
		at.readAfter(t, tb)
		if !tb.holdsNowhere(saved) {
			t.Errorf("the page holds the saved value after the fill")
		}
		if !a.login2.gotOnly(a.ctx, posted, saved) {
			t.Errorf("the login server did not receive the saved value, once")
		}
		welcome(t, tb)
		// What the listeners kept survives the navigation (sessionStorage,
		// window.name); call scans it for every secret.
		pw, _ = at.find(t, "s="+tb.token)
		if out, _ := at.eval(t, pw, readAllJS, true); !strings.Contains(out, "kept=") {
			t.Errorf("%s: reading back what the listeners kept failed: %s", pw, a.Withheld([]byte(out)))
		}
		if via == fill.ViaCDP {
			ns := a.notices.Notices()
			if len(ns) != notices+1 {
				t.Errorf("%d desktop notices for a fill with no prompt; want 1", len(ns)-notices)
			}
			for _, n := range ns {
				leakscan.Bytes(t, saved, "a desktop notice", []byte(n.Summary+"\n"+n.Body))
			}
		}
		at.scan(t, m)
	}
	// then none: refused before anything is read or inserted.
	thenNone := func(t *testing.T, ask ask) {
		ready(t, tb)
		m := at.tools.mark(t)
		posted := a.login2.count()
		notices := len(a.notices.Notices())
		res := ask(t, "none")
		if res.Status != fill.StatusRefused || res.Via != via || res.Submitted != nil || res.HandedOver != nil ||
			!strings.Contains(res.Detail, "clean room") || !strings.Contains(res.Detail, "(then none)") ||
			!strings.Contains(res.Detail, `set driven = "in-page" for `+savedSvc) {
			t.Errorf("result %+v; want refused via %s: the clean room cannot leave the value in the field, and the fix", res, via)
		}
		at.readAfter(t, tb)
		if !pageIs(t, tb, `location.pathname === "/login"`) || !fieldEmpty(t, tb) || !tb.holdsNowhere(saved) {
			t.Errorf("the login page changed, or its field holds something, after a refusal")
		}
		if n := a.login2.count() - posted; n != 0 {
			t.Errorf("the login server received %d logins after a refusal; want none", n)
		}
		if via == fill.ViaCDP && len(a.notices.Notices()) != notices {
			t.Errorf("a desktop notice for a refused request")
		}
		at.scan(t, m)
	}

	t.Run("lease, fillgate fill --then none: refused", func(t *testing.T) { thenNone(t, cli) })
	t.Run("lease, fillgate fill: the clean room logs in", func(t *testing.T) {
		cleanRoom(t, "under a lease, with a notice and no prompt", cli)
	})

	a.writePolicy(attackPolicy(gtk2, top, "[service.\"127.0.0.2:"+u.Port()+"\"]\napproval = \"none\"\n"))
	t.Run("approval none, fillgate fill --then none: refused", func(t *testing.T) { thenNone(t, cli) })
	t.Run("approval none, MCP request_secret then none: refused", func(t *testing.T) { thenNone(t, viaMCP) })
	t.Run("approval none, MCP request_secret: the clean room logs in", func(t *testing.T) {
		cleanRoom(t, "with a notice and no prompt", viaMCP)
	})
}
