//go:build linux

package undriven

import (
	"context"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// promptOpen is the host's log line when it starts a page prompt.
const promptOpen = `"prompt open"`

// typesInPage: nothing drives the browser, so the prompt opens in it, as
// a page; the person types the password there and presses Enter. The
// login server gets exactly that password, and the page goes on.
func typesInPage(t *testing.T, ctx context.Context, r *rig) {
	secret := r.secret(t)
	r.site.Login.SetRight(secret)
	r.undriven(t)
	from := r.site.mark()
	a := r.fill(t)
	w := r.pagePrompt(t, ctx)
	r.answer(t, ctx, w, secret)
	res := r.result(t, a)
	r.typed(t)
	r.gone(t, ctx, w, 5*time.Second)
	r.sent(t, ctx, res, from, secret)
}

// cancelsInPage: the person types in the page prompt, thinks better of
// it and presses Escape: cancelled, nothing inserted, and what they typed
// is nowhere.
func cancelsInPage(t *testing.T, ctx context.Context, r *rig) {
	secret := r.secret(t)
	r.undriven(t)
	logins := r.site.Login.Requests("/classic/login")
	a := r.fill(t)
	w := r.pagePrompt(t, ctx)
	r.types(t, ctx, w, secret)
	r.press(t, ctx, w, "Escape")
	r.want(t, r.result(t, a), fill.StatusCancelled, "the human cancelled the prompt")
	r.gone(t, ctx, w, 5*time.Second)
	r.nothingSent(t, ctx, logins, secret)
}

// nativeByPolicy: the browser is undriven, but the person's policy says
// prompt = "native": pinentry asks at once, and no page prompt ever
// opens.
func nativeByPolicy(t *testing.T, ctx context.Context, r *rig) {
	r.setPolicy(t, `prompt = "native"`+"\n")
	defer r.setPolicy(t, "")
	secret := r.secret(t)
	r.site.Login.SetRight(secret)
	r.undriven(t)
	mark := r.logMark(t)
	from := r.site.mark()
	a := r.fill(t)
	d := r.dialog(t, ctx, promptName)
	r.noBrowserPrompt(t, ctx)
	r.answerInDialog(t, ctx, d, secret)
	res := r.result(t, a)
	r.typed(t)
	r.pagePrompts(t, mark, 0)
	r.sent(t, ctx, res, from, secret)
}

// nobodyAnswers: the page prompt opens, the person starts typing and
// never sends it; the agent's short budget ends (no_response), and its
// immediate retry is refused with the cool-down, raising no second
// prompt. It starts a 10-minute cool-down for the agent and the service:
// the last scenario.
func nobodyAnswers(t *testing.T, ctx context.Context, r *rig) {
	secret := r.secret(t)
	r.undriven(t)
	logins := r.site.Login.Requests("/classic/login")
	mark := r.logMark(t)
	a := r.fill(t, "--timeout", "6s")
	w := r.pagePrompt(t, ctx)
	r.types(t, ctx, w, secret)
	res := r.result(t, a)
	r.want(t, res, fill.StatusNoResponse, "nobody answered the prompt within 6s")
	r.gone(t, ctx, w, 5*time.Second)

	start := time.Now()
	res = r.result(t, r.fill(t))
	r.want(t, res, fill.StatusRefused, "nobody answered the last prompt for "+r.site.Service()+" from this agent")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the refused retry took %v", took)
	}
	if ws := r.windows(t, ctx, promptName); len(ws) != 0 {
		t.Errorf("a prompt opened for the retry: %q", ws[0].Name)
	}
	r.pagePrompts(t, mark, 1) // none for the retry
	r.nothingSent(t, ctx, logins, secret)
}

// sent checks that a fill went through (ok, the form submitted and the
// page on to the welcome page since report from) and that the login
// server got secret in one login and nowhere else.
func (r *rig) sent(t testing.TB, ctx context.Context, res fill.Result, from int, secret []byte) {
	t.Helper()
	r.want(t, res, fill.StatusOK)
	r.submitted(t, res)
	r.signedIn(t, ctx, from)
	r.scan(t, secret, 1)
}

// typed checks that the audit log says the last fill's value was typed.
func (r *rig) typed(t testing.TB) {
	t.Helper()
	if e := r.lastAudit(t, fill.StatusOK); e.How != fill.HowTyped {
		t.Errorf("the audit log says the value was %q; want typed", e.How)
	}
}

// nothingSent checks that the login page is as it was and that secret is
// nowhere, the login server included.
func (r *rig) nothingSent(t testing.TB, ctx context.Context, logins int, secret []byte) {
	t.Helper()
	r.untouched(t, ctx, logins)
	r.scan(t, secret, 0)
}

// pagePrompts checks that the host started n page prompts since mark.
func (r *rig) pagePrompts(t testing.TB, mark, n int) {
	t.Helper()
	if got := countLines(r.logSince(t, mark), promptOpen); got != n {
		t.Errorf("the host started %d page prompts; want %d", got, n)
	}
}

// signedIn checks that the login page, since report from, submitted and
// went on to the welcome page, so that no field holds the value any more.
func (r *rig) signedIn(t testing.TB, ctx context.Context, from int) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := r.site.await(wctx, from, func(p pageState) bool { return p.Path == "/welcome" }); err != nil {
		t.Fatalf("the login page did not go on to the welcome page (%v); it reported %+v since (another browser's pages, such as a clean room's: %+v); "+
			"the login server had %d logins, %d welcome pages",
			err, r.site.since(from), r.site.others(), r.site.Login.Requests("/classic/login"), r.site.Login.Requests("/welcome"))
	}
	st, err := r.site.state(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Path != "/welcome" || !st.Left {
		t.Errorf("after the fill the page is %+v; want the welcome page, with no password field", st)
	}
}
