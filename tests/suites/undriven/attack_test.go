//go:build linux

package undriven

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/attackext"
	"github.com/fillgate/fillgate/tests/kit/desktop"
)

// promptPages picks, for the attacker, every page on 127.0.0.1 but the
// login site's: fillgate's page prompt.
func (r *rig) promptPages(op string) attackext.Order {
	return attackext.Order{Op: op, Prefix: "http://127.0.0.1:", Except: r.site.URL}
}

// pageResult is what the attacker reports for one page it acted on.
type pageResult struct {
	URL   string          `json:"url"`
	Value json.RawMessage `json:"value"`
	Error string          `json:"error"`
}

// attack gives the attacker order o and returns what it reports for each
// page; the order must have succeeded.
func (r *rig) attack(t testing.TB, ctx context.Context, o attackext.Order) []pageResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rep, err := r.attacker.Do(ctx, o)
	if err != nil {
		t.Fatalf("the attacker: %v", err)
	}
	if !rep.OK {
		t.Fatalf("the attacker's %s failed: %s", o.Op, rep.Error)
	}
	var out []pageResult
	if len(rep.Results) > 0 {
		if err := json.Unmarshal(rep.Results, &out); err != nil {
			t.Fatalf("the attacker's %s reported something else than pages: %v", o.Op, err)
		}
	}
	return out
}

// noPromptPage checks that the attacker, ordered op on every prompt page
// it can find, finds none.
func (r *rig) noPromptPage(t testing.TB, ctx context.Context, o attackext.Order) {
	t.Helper()
	if got := r.attack(t, ctx, o); len(got) != 0 {
		t.Errorf("the attacker found %d prompt pages to %s", len(got), o.Op)
	}
}

// attackerFindsNoPrompt: an extension that can drive the browser is
// installed, so the person answers in pinentry from the start. While the
// dialog is open the attacker lists every page, and tries to install key
// loggers in, read and answer every page on 127.0.0.1 but the login
// site's: there is none. The person types in pinentry; fillgate logs in
// in its clean room and hands the tab the session: the fill is ok, the
// tab goes on signed in, and the attacker got nothing.
func attackerFindsNoPrompt(t *testing.T, ctx context.Context, r *rig) {
	secret := r.secret(t)
	r.site.Login.SetRight(secret)
	r.drivenBy(t, "another extension could drive it")
	mark, from := r.logMark(t), r.site.mark()
	a := r.fill(t)
	d := r.dialog(t, ctx, promptName)
	r.noBrowserPrompt(t, ctx)
	r.noPromptPage(t, ctx, r.promptPages("targets"))
	r.noPromptPage(t, ctx, r.promptPages("spy"))
	r.noPromptPage(t, ctx, r.promptPages("read"))
	forged := r.promptPages("answer")
	forged.Selector, forged.Text = "#value", "forged-by-the-attacker"
	r.noPromptPage(t, ctx, forged)
	r.answerInDialog(t, ctx, d, secret)
	res := r.result(t, a)
	if res.HandedOver == nil || !*res.HandedOver || res.TabOrigin != r.site.URL {
		t.Errorf("result %s; want the session handed over to the tab, on %s", r.show(res), r.site.URL)
	}
	r.pagePrompts(t, mark, 0)
	r.sent(t, ctx, res, from, secret)
}

// attackerCannotApprove: a saved value (the OS keyring, approval "each")
// with an extension that can drive the browser installed: the approval is
// asked in pinentry (for a login in the clean room), where the attacker
// cannot click. It tries to click Approve and to answer in every prompt
// page it can find (none); the person presses Escape: cancelled, nothing
// filled.
func attackerCannotApprove(t *testing.T, ctx context.Context, r *rig) {
	saved := r.secret(t)
	r.site.Login.SetRight(saved)
	if out, errOut, code := r.cli(t, saved, "remember", "--service", r.site.Service(), "--account", "ada", "--stdin"); code != 0 {
		t.Fatalf("fillgate remember exited %d: %s", code, r.safe(string(out)+string(errOut)))
	}
	defer func() {
		if out, errOut, code := r.cli(t, nil, "forget", "--service", r.site.Service()); code != 0 {
			t.Errorf("fillgate forget exited %d: %s", code, r.safe(string(out)+string(errOut)))
		}
	}()
	r.drivenBy(t, "another extension could drive it")
	logins := r.site.Login.Requests("/classic/login")
	a := r.fill(t)
	d := r.dialog(t, ctx, "^fillgate — use the saved password for ")
	click := r.promptPages("click")
	click.Selector = "#approve"
	r.noPromptPage(t, ctx, click)
	forged := r.promptPages("answer")
	forged.Selector, forged.Text = "#value", "forged-by-the-attacker"
	r.noPromptPage(t, ctx, forged)
	r.noBrowserPrompt(t, ctx)
	r.press(t, ctx, d, "Escape")
	r.want(t, r.result(t, a), fill.StatusCancelled, "the human cancelled the prompt")
	r.nothingSent(t, ctx, logins, saved)
}

// becomesDrivable: the page prompt is open, and the person has typed
// the password in it, when the browser becomes drivable: a live DevTools
// endpoint appears in its profile (DevToolsActivePort), as Chrome's
// chrome://inspect remote-debugging switch makes it for
// chrome-devtools-mcp --autoConnect. fillgate closes the page within
// about a second. Under the person's default (driven = "clean-room") the
// login would now happen in a clean room, which this fill did not open:
// the fill fails and says to ask again, no native dialog asks, what the
// person typed is discarded, and nothing reaches the login page or the
// site.
func becomesDrivable(t *testing.T, ctx context.Context, r *rig) {
	secret := r.secret(t)
	r.site.Login.SetRight(secret)
	r.undriven(t)
	logins := r.site.Login.Requests("/classic/login")
	mark := r.logMark(t)
	a := r.fill(t)
	w := r.pagePrompt(t, ctx)
	r.types(t, ctx, w, secret)
	stop := r.drivableWhileOpen(t, ctx, w)
	r.want(t, r.result(t, a), fill.StatusFailed,
		"a program began to drive the browser while the prompt was open",
		"the answer was discarded and nothing was inserted",
		"ask again: fillgate then logs in in a clean room")
	if ws := r.windows(t, ctx, promptName); len(ws) != 0 {
		t.Errorf("a prompt is open after the fill ended: %q", ws[0].Name)
	}
	r.switched(t, mark)
	r.pagePrompts(t, mark, 1)
	r.nothingSent(t, ctx, logins, secret)
	r.undrivenAgain(t, stop)
}

// becomesDrivableInPage: as becomesDrivable, where the person's policy
// lets fillgate type into a browser a program drives for the site
// (driven = "in-page"): fillgate closes the page within about a second
// and asks in pinentry; the person types there, and fillgate types the
// value into the login page itself (no clean room, no handover).
func becomesDrivableInPage(t *testing.T, ctx context.Context, r *rig) {
	r.setPolicy(t, fmt.Sprintf("\n[service.%q]\ndriven = \"in-page\"\n", r.site.Service()))
	defer r.setPolicy(t, "")
	secret := r.secret(t)
	r.site.Login.SetRight(secret)
	r.undriven(t)
	mark, from := r.logMark(t), r.site.mark()
	a := r.fill(t)
	w := r.pagePrompt(t, ctx)
	stop := r.drivableWhileOpen(t, ctx, w)
	d := r.dialog(t, ctx, promptName)
	r.answerInDialog(t, ctx, d, secret)
	res := r.result(t, a)
	if res.HandedOver != nil {
		t.Errorf("result %s; want the value typed into the page, no session handed over", r.show(res))
	}
	r.typed(t)
	r.switched(t, mark)
	r.pagePrompts(t, mark, 1)
	r.sent(t, ctx, res, from, secret)
	r.undrivenAgain(t, stop)
}

// drivableWhileOpen makes the browser drivable (devToolsEndpoint) while
// the page prompt w is open, and checks that the page closes within
// about a second. stop removes the endpoint.
func (r *rig) drivableWhileOpen(t testing.TB, ctx context.Context, w desktop.Window) (stop func()) {
	t.Helper()
	stop = r.devToolsEndpoint(t)
	start := time.Now()
	r.gone(t, ctx, w, 3*time.Second)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the page prompt stayed open %v after the browser became drivable; want about a second at most", took.Round(time.Millisecond))
	} else {
		t.Logf("the page prompt closed %v after the browser became drivable", took.Round(time.Millisecond))
	}
	return stop
}

// undrivenAgain removes the DevTools endpoint with stop and waits until
// the host says that nothing drives the browser again.
func (r *rig) undrivenAgain(t testing.TB, stop func()) {
	t.Helper()
	stop()
	r.awaitHost(t, "the browser undriven once the endpoint went", func(h agentsock.HostStatus) bool {
		return h.Drive != nil && !h.Drive.Driven
	})
}

// devToolsEndpoint makes the browser's profile hold a live
// DevToolsActivePort: a loopback listener of the test's and its port, as
// Chromium writes it when remote debugging is switched on. stop removes
// both.
func (r *rig) devToolsEndpoint(t testing.TB) (stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	file := filepath.Join(r.profile, "DevToolsActivePort")
	port := ln.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(file, fmt.Appendf(nil, "%d\n/devtools/browser/fillgate-test\n", port), 0o600); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = os.Remove(file)
			_ = ln.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}

// switched checks that the host logged, since mark, that the browser
// became drivable while the page prompt was open.
func (r *rig) switched(t testing.TB, mark int) {
	t.Helper()
	if !strings.Contains(r.logSince(t, mark), "the browser became drivable while the prompt was open") {
		t.Error("the host's log does not say the browser became drivable while the prompt was open")
	}
}
