//go:build linux

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/desktop"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// nativePolicy is testPolicy with the person's default of where they
// answer (prompt = "auto"): the test's browser has a debugging port, so
// the person answers in the native dialog. As in testPolicy, the person
// consents to in-page fills of that browser (driven = "in-page"): these
// tests check what reaches the page itself (the value, or nothing);
// tests/suites/cleanroom answers the native dialog for logins in the
// clean room.
const nativePolicy = `# fillgate end-to-end tests of the native dialog
rate_limit = "1000/1m"
no_response_cooldown = "0s"
driven = "in-page"
`

// nativeChromium is a Chromium whose host shows its native dialogs on a
// private X display, where the person answers them with the keyboard.
type nativeChromium struct {
	*chromium
	person *desktop.Person
}

// startNativeChromium starts the rig with a private display in the
// browser's environment (the host inherits it) and the default prompt.
func startNativeChromium(t *testing.T, ctx context.Context) *nativeChromium {
	t.Helper()
	display := desktop.Start(t)
	r := newRig(t)
	r.env = append(r.env, display.Env()...)
	r.writePolicy(t, nativePolicy)
	return &nativeChromium{chromium: startChromiumIn(t, ctx, r, "profile"), person: display.Person(t)}
}

// dialog waits for the native dialog and returns it with the keyboard.
func (nc *nativeChromium) dialog(t *testing.T, a *agent) desktop.Window {
	t.Helper()
	ctx, cancel := a.Awaiting(nc.ctx, 30*time.Second)
	defer cancel()
	w, err := nc.person.WaitDialog(ctx)
	if err != nil {
		t.Fatalf("no native dialog: %v; fillgate fill printed %s", err, a.Stdout())
	}
	return w
}

// types types secret into the dialog and presses Enter.
func (nc *nativeChromium) types(t *testing.T, secret []byte) {
	t.Helper()
	if err := nc.person.Type(nc.ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := nc.person.Key(nc.ctx, "Return"); err != nil {
		t.Fatal(err)
	}
}

// gone checks that the dialog is no longer on the display.
func (nc *nativeChromium) gone(t *testing.T, w desktop.Window) {
	t.Helper()
	ctx, cancel := context.WithTimeout(nc.ctx, 5*time.Second)
	defer cancel()
	if err := nc.person.WaitGone(ctx, w); err != nil {
		t.Errorf("the native dialog outlived its request: %v", err)
	}
}

// TestNativeDialog: a browser a program drives (this test's own debugging
// port) with the default prompt setting and the person's consent to
// in-page fills: the person answers every request in the native dialog on
// the desktop, never in a page of the browser,
// which the agent's own view of the browser shows. Every outcome, with the
// leak scan of everything the request wrote.
func TestNativeDialog(t *testing.T) {
	ctx := testContext(t, 4*time.Minute)
	nc := startNativeChromium(t, ctx)
	n0 := nc.prompts.Count()

	t.Run("typed: ok, and the page shows nothing of the prompt", func(t *testing.T) {
		secret := nc.secret(t)
		tb := loginFocused(t, nc)
		a, _ := nc.request(t, "--service", svc, "--then", "none")
		w := nc.dialog(t, a)
		name, err := nc.person.Name(ctx, w)
		if err != nil || !strings.Contains(name, "fillgate") {
			t.Errorf("the dialog is named %q (%v)", name, err)
		}
		nc.types(t, secret)
		res, code := nc.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword, "nothing was submitted")
		if !tb.holds(pwHolds, secret) {
			t.Errorf("value differed")
		}
		nc.gone(t, w)
		audit := nc.lastAudit(t)
		if audit.How != fill.HowTyped {
			t.Errorf("audit says how %q", audit.How)
		}
	})

	// While the person answers in the native dialog, the agent's own
	// DevTools view of the browser (the test's CDP connection stands for
	// it) lists no prompt page and can read nothing of what the person
	// types.
	t.Run("the agent's view of the browser lists no prompt page", func(t *testing.T) {
		secret := nc.secret(t)
		loginFocused(t, nc)
		a, _ := nc.request(t, "--service", svc)
		nc.dialog(t, a)
		pages := nc.pageURLs(t)
		for _, u := range pages {
			if !strings.HasPrefix(u, nc.origin1+"/") && u != "about:blank" {
				t.Errorf("while the dialog is open, the browser has a page %s", u)
			}
		}
		nc.types(t, secret)
		res, code := nc.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		leakscan.Bytes(t, secret, "the pages the browser listed", []byte(fmt.Sprint(pages)))
	})

	t.Run("cancelled with Escape", func(t *testing.T) {
		tb := loginFocused(t, nc)
		a, _ := nc.request(t, "--service", svc)
		w := nc.dialog(t, a)
		if err := nc.person.Key(ctx, "Escape"); err != nil {
			t.Fatal(err)
		}
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusCancelled, svc, fill.FieldPassword, "cancelled")
		untouched(t, tb)
		nc.gone(t, w)
	})

	t.Run("the dialog closed by its window's close button", func(t *testing.T) {
		tb := loginFocused(t, nc)
		a, _ := nc.request(t, "--service", svc)
		w := nc.dialog(t, a)
		if err := nc.person.Close(ctx, w); err != nil {
			t.Fatal(err)
		}
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusCancelled, svc, fill.FieldPassword)
		untouched(t, tb)
		nc.gone(t, w)
	})

	t.Run("nobody answers: no_response, and the dialog goes", func(t *testing.T) {
		tb := loginFocused(t, nc)
		a, _ := nc.request(t, "--service", svc, "--timeout", "6s")
		w := nc.dialog(t, a)
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusNoResponse, svc, fill.FieldPassword, "nobody answered")
		if res.Fallback == "" {
			t.Errorf("no fallback advice: %+v", res)
		}
		untouched(t, tb)
		nc.gone(t, w)
	})

	t.Run("the page goes to another origin before the answer: refused, nothing typed", func(t *testing.T) {
		secret := nc.secret(t)
		tb := loginFocused(t, nc)
		a, _ := nc.request(t, "--service", svc)
		w := nc.dialog(t, a)
		tb.navigate(nc.origin2 + "/password")
		tb.focus(pw)
		if err := nc.person.WaitFocus(ctx, w); err != nil {
			t.Fatal(err)
		}
		nc.types(t, secret)
		res, code := nc.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword, "nothing was inserted")
		untouched(t, tb)
		nc.gone(t, w)
	})

	t.Run("no display for the host: refused with the fix, never a page", func(t *testing.T) {
		// The policy names a pinentry that is not there: no dialog can
		// be shown, and a browser a program drives gets no page prompt.
		nc.writePolicy(t, nativePolicy+"pinentry = \"/nonexistent/pinentry-gtk-2\"\n")
		defer nc.writePolicy(t, nativePolicy)
		tb := loginFocused(t, nc)
		a, _ := nc.request(t, "--service", svc)
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusRefused, svc, fill.FieldPassword,
			"the browser can be driven by a program", "none can be shown here", "nothing was asked")
		untouched(t, tb)
	})

	// Through every scenario, no prompt page ever opened in the browser.
	noPrompt(t, nc, n0)
	if t.Failed() {
		return
	}
	finish(t, nc)
}
