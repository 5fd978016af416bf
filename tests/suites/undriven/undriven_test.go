//go:build linux

package undriven

import (
	"context"
	"strings"
	"testing"
	"time"
)

// testContext is the test's context, ended after limit.
func testContext(t *testing.T, limit time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	t.Cleanup(cancel)
	return ctx
}

// TestUndriven runs every scenario of a browser nothing drives in one
// browser a person started (no debugging port, no other extension), in an
// order that leaves each the browser as the next needs it: nothing
// attached to it, the login page open with its password field focused.
// The one that ends with a cool-down for the agent runs last.
func TestUndriven(t *testing.T) {
	ctx := testContext(t, 3*time.Minute)
	r := newRig(t, ctx, false)
	runScenarios(t, ctx, r, []scenario{
		{"nothing drives: the person types in the page prompt", typesInPage},
		{"nothing drives: the person cancels in the page prompt", cancelsInPage},
		{"prompt native: pinentry at once, never the page", nativeByPolicy},
		{"the browser becomes drivable while the page prompt is open: the fill fails (clean room)", becomesDrivable},
		{"the browser becomes drivable while the page prompt is open, driven in-page: pinentry asks", becomesDrivableInPage},
		{"nobody answers: no_response, then no second prompt", nobodyAnswers},
	})
}

// TestDrivingExtension runs the attacker's scenarios in a browser a person
// started with an extension that can drive it through chrome.debugger
// (tests/fakes/attackext, standing for Claude in Chrome or Playwright MCP's
// bridge extension). Such an extension can attach to the prompt's page,
// act and detach between any two of fillgate's looks at the browser, so
// while it is enabled the person answers in the native dialog from the
// start: the attacker finds no prompt page to read, type into or click.
// Under the person's default (driven = "clean-room"), the login then
// happens in fillgate's clean room, and the browser gets the session.
func TestDrivingExtension(t *testing.T) {
	ctx := testContext(t, 3*time.Minute)
	r := newRig(t, ctx, true)
	runScenarios(t, ctx, r, []scenario{
		{"the person answers in pinentry; the attacker finds no prompt page", attackerFindsNoPrompt},
		{"the attacker cannot answer or approve a saved value", attackerCannotApprove},
	})
}

// scenario is one scenario of a rig's browser.
type scenario struct {
	name string
	run  func(t *testing.T, ctx context.Context, r *rig)
}

// runScenarios runs each scenario in turn.
func runScenarios(t *testing.T, ctx context.Context, r *rig, ss []scenario) {
	for _, s := range ss {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, ctx, r) }) {
			// The browser may be left as the next scenario does not
			// expect; say so once, then go on: each checks what it needs.
			t.Logf("after %q failed, the scenarios that follow may fail for its sake", s.name)
		}
	}
}

// logMark is where the host's log ends now.
func (r *rig) logMark(t testing.TB) int { return len(r.hostLog(t)) }

// logSince is what the host logged after mark.
func (r *rig) logSince(t testing.TB, mark int) string { return r.hostLog(t)[mark:] }

// untouched checks that nothing was inserted into the login page: it is
// still open with its password field focused and empty, and the login
// server got no login besides the logins it had before.
func (r *rig) untouched(t testing.TB, ctx context.Context, logins int) {
	t.Helper()
	st, err := r.site.state(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Path != "/classic" || st.Focused != "pw" || !st.Left {
		t.Errorf("the login page is now %+v; want it as it was, its password field focused and empty", st)
	}
	if n := r.site.Login.Requests("/classic/login"); n != logins {
		t.Errorf("the login server got %d logins; want %d, as before", n, logins)
	}
}

// countLines counts the lines of log that hold s.
func countLines(log, s string) int {
	n := 0
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}
