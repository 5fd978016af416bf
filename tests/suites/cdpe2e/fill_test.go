// Package cdpe2e runs the CDP fallback against real headless Chromium:
// fillgate's cdp.Browser attaches to tabs the test (playing the user)
// opened and clicked into, inspects and inserts, and the test checks the
// page, the outcome, that every user tab is still open, and that the
// secret appears nowhere it must not.
package cdpe2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	hostcdp "github.com/fillgate/fillgate/internal/cdp"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// step bounds one Browser call.
func (e *env) step() context.Context {
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

// inspect runs Inspect and fails the test on an error.
func (e *env) inspect(b *hostcdp.Browser, service, field string) fill.Inspection {
	e.t.Helper()
	in, err := b.Inspect(e.step(), fill.Request{Service: service, Field: field})
	if err != nil {
		e.t.Fatalf("inspect: %v", err)
	}
	return in
}

// insert runs Insert with then none.
func (e *env) insert(b *hostcdp.Browser, in fill.Inspection, secret []byte) fill.Verdict {
	e.t.Helper()
	return e.insertThen(b, in, secret, fill.ThenNone)
}

// insertThen runs Insert with a copy of secret (zeroed afterwards, as the
// Engine does) and then, and scans what comes back for secret.
func (e *env) insertThen(b *hostcdp.Browser, in fill.Inspection, secret []byte, then string) fill.Verdict {
	e.t.Helper()
	value := append([]byte(nil), secret...)
	v, err := b.Insert(e.step(), in, value, fill.InsertOptions{Then: then})
	clear(value)
	if err != nil {
		leakscan.Bytes(e.t, secret, "the insert error", []byte(err.Error()))
		e.t.Fatalf("insert: %v", err)
	}
	out, _ := json.Marshal(v)
	leakscan.Bytes(e.t, secret, "the verdict", out)
	// Neither the browser's nor this process's argv and environment.
	leakscan.Process(e.t, secret, e.chrome.Cmd.Process.Pid)
	leakscan.Process(e.t, secret, os.Getpid())
	return v
}

// fieldIs reports whether the element with id in the tab's page holds
// secret; only a boolean leaves the page.
func fieldIs(t testing.TB, ctx context.Context, id string, secret []byte) bool {
	t.Helper()
	return valueIs(t, ctx, `function(v){return document.getElementById(`+quote(id)+`).value===v}`, secret)
}

// takeField reports whether the element with id holds secret, and
// empties it in the same call. A test that leaves a value in a text field
// (then none) leaves it to the browser, which keeps a text field's value
// in its session files (Sessions/) a second or two later, as it keeps
// anything typed there; emptied at once, the field is never saved with
// it, and the final scan sees only what fillgate wrote.
func takeField(t testing.TB, ctx context.Context, id string, secret []byte) bool {
	t.Helper()
	return valueIs(t, ctx, `function(v){const f=document.getElementById(`+quote(id)+`);const ok=f.value===v;f.value="";return ok}`, secret)
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// noFieldHolds reports whether no input of the page holds secret or any
// part of a value (all empty).
func allEmpty(t testing.TB, ctx context.Context) bool {
	t.Helper()
	return valueIs(t, ctx, `function(v){return Array.from(document.querySelectorAll('input')).every(i => i.value === '')}`, nil)
}

func wantKind(t testing.TB, in fill.Inspection, kind string) {
	t.Helper()
	if in.Field.Kind != kind || in.Field.Problem != "" {
		t.Fatalf("inspection field = %+v, want kind %s and no problem", in.Field, kind)
	}
}

func wantInserted(t testing.TB, v fill.Verdict) {
	t.Helper()
	if !v.Inserted || !v.Matched || v.Reason != "" {
		t.Fatalf("verdict = %+v, want inserted and matched", v)
	}
}

func wantRefused(t testing.TB, v fill.Verdict, reason string) {
	t.Helper()
	if v.Inserted || v.Reason != reason {
		t.Fatalf("verdict = %+v, want not inserted with reason %s", v, reason)
	}
}

// TestBrowser runs fillgate's cdp.Browser against one real headless
// Chromium that its cases share, each on tabs of its own (env.sub: a
// case's tabs are closed, and must all have stayed open, before the next
// starts; the profile is scanned for every case's secrets once the
// browser stopped).
func TestBrowser(t *testing.T) {
	e := newEnvWithin(t, 10*time.Minute)
	for _, c := range []struct {
		name string
		run  func(*testing.T, *env)
	}{
		{"Password", password},
		{"OneTimeCode", oneTimeCode},
		{"SplitCode", splitCode},
		{"CrossOriginIframe", crossOriginIframe},
		{"HiddenIframeIsReported", hiddenIframeIsReported},
		{"ClosedShadowRoot", closedShadowRoot},
		{"SpoofingPageCannotFoolTheChecks", spoofingPageCannotFoolTheChecks},
		{"FocusMovedBeforeInsert", beforeInsert("focus_moved", func(e *env, tb *tab) {
			tb.click(100, 35) // the user moves to the username field
		})},
		{"NavigationBeforeInsert", beforeInsert("origin_changed", func(e *env, tb *tab) {
			tb.navigate(e.originB + "/password") // to another origin, while the prompt is open
			tb.click(100, 95)
		})},
		{"ReloadBeforeInsert", beforeInsert("element_gone", func(e *env, tb *tab) {
			tb.navigate(e.originA + "/password")
			tb.click(100, 95)
		})},
		{"IframeNavigatedBeforeInsert", iframeNavigatedBeforeInsert},
		{"TabClosedBeforeInsert", tabClosedBeforeInsert},
		{"SeveralTabs", severalTabs},
		{"CloseLeavesTheTabOpen", closeLeavesTheTabOpen},
		{"DetachOnCancelIsWhatKeepsTabs", detachOnCancelIsWhatKeepsTabs},
		{"PromptInCDPTab", promptInCDPTab},
		{"PromptWithSystemOpener", promptWithSystemOpener},
		{"SubmitAndLeaveNothing", submitAndLeaveNothing},
		{"CancelWhileOpeningThePromptTab", cancelWhileOpeningThePromptTab},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, e.sub(t)) })
	}
}

// onPassword opens the password page of origin A as the user, clicks
// into its password field, connects and inspects.
func (e *env) onPassword() (*tab, *hostcdp.Browser, fill.Inspection) {
	e.t.Helper()
	tb := e.openTab(e.originA + "/password")
	tb.click(100, 95)
	b := e.connect(hostcdp.Options{})
	return tb, b, e.inspect(b, "127.0.0.1", fill.FieldPassword)
}

// beforeInsert is a case where change happens to the password page
// between inspect and insert: the insert is refused with reason, and no
// field is filled.
func beforeInsert(reason string, change func(e *env, tb *tab)) func(*testing.T, *env) {
	return func(t *testing.T, e *env) {
		tb, b, in := e.onPassword()
		change(e, tb)
		wantRefused(t, e.insert(b, in, e.secret()), reason)
		if !allEmpty(t, tb.ctx) {
			t.Fatalf("a field was filled although the insert was refused (%s)", reason)
		}
	}
}

func password(t *testing.T, e *env) {
	tb, b, in := e.onPassword()
	wantKind(t, in, fill.FieldPassword)
	if len(in.Origins) != 1 || in.Origins[0] != e.originA {
		t.Fatalf("origins = %v, want [%s]", in.Origins, e.originA)
	}
	secret := e.secret()
	wantInserted(t, e.insert(b, in, secret))
	if !fieldIs(t, tb.ctx, "pw", secret) {
		t.Errorf("password field: value differed")
	}
	if !tb.evalBool(`window.trusted >= 1 && document.getElementById('user').value === ''`) {
		t.Errorf("the page saw no trusted input event, or another field changed")
	}
}

func oneTimeCode(t *testing.T, e *env) {
	tb := e.openTab(e.originA + "/otp")
	tb.click(100, 95)
	b := e.connect(hostcdp.Options{})
	in := e.inspect(b, "127.0.0.1", fill.FieldOTP)
	wantKind(t, in, fill.FieldOTP)
	secret := e.secret()
	wantInserted(t, e.insert(b, in, secret))
	if !takeField(t, tb.ctx, "otp", secret) {
		t.Errorf("one-time-code field: value differed")
	}
}

func splitCode(t *testing.T, e *env) {
	tb := e.openTab(e.originA + "/split")
	tb.click(35, 95) // the first box
	b := e.connect(hostcdp.Options{})
	in := e.inspect(b, "127.0.0.1", fill.FieldOTP)
	wantKind(t, in, fill.FieldOTP)
	if in.Field.Split != 6 {
		t.Fatalf("split = %d, want 6", in.Field.Split)
	}
	code := splitSecret(t)
	e.secrets = append(e.secrets, code)
	wantInserted(t, e.insert(b, in, code))
	// Compared and emptied in one call (see takeField).
	if !valueIs(t, tb.ctx, `function(v){const bs=Array.from(document.querySelectorAll('#row input'));const ok=bs.map(i => i.value).join('') === v;bs.forEach(i => { i.value = ""; });return ok}`, code) {
		t.Errorf("split boxes: value differed")
	}
}

// splitSecret is a random 6-character code for the split boxes.
func splitSecret(t testing.TB) []byte {
	const letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return b
}

func crossOriginIframe(t *testing.T, e *env) {
	tb := e.openTab(e.originA + "/frame?src=" + e.originB + "/password")
	fctx := e.frameCtx(e.originB + "/password") // an out-of-process frame
	tb.clickInFrame(fctx, 100, 95, "pw")        // the password field inside the iframe
	b := e.connect(hostcdp.Options{})
	in := e.inspect(b, "127.0.0.2", fill.FieldPassword)
	wantKind(t, in, fill.FieldPassword)
	if strings.Join(in.Origins, " ") != e.originB+" "+e.originA {
		t.Fatalf("origins = %v, want the iframe's then the top page's", in.Origins)
	}
	secret := e.secret()
	wantInserted(t, e.insert(b, in, secret))
	if !fieldIs(t, fctx, "pw", secret) {
		t.Errorf("password field in the cross-origin iframe: value differed")
	}
}

func hiddenIframeIsReported(t *testing.T, e *env) {
	tb := e.openTab(e.originA + "/frame?src=" + e.originB + "/password")
	tb.clickInFrame(e.frameCtx(e.originB+"/password"), 100, 95, "pw")
	tb.eval(`document.getElementById('f').style.opacity = '0.01'; true`)
	b := e.connect(hostcdp.Options{})
	in := e.inspect(b, "127.0.0.2", fill.FieldPassword)
	if in.Field.Problem != "transparent" {
		t.Fatalf("a transparent iframe was not reported: field %+v", in.Field)
	}
}

// closedShadowRoot fills a field in a closed shadow root (nested in
// another): the CDP isolated world cannot see into it, so fillgate resolves
// the roots with DOM.describeNode and DOM.resolveNode and passes them to the
// in-page function, which checks and inserts in one call as usual.
func closedShadowRoot(t *testing.T, e *env) {
	tb := e.openTab(e.originA + "/closed-shadow")
	tb.click(100, 95)
	if !tb.evalBool(`window.inner.activeElement === window.inner.getElementById('pw') && document.activeElement.id === 'host'`) {
		t.Fatal("control: the click did not focus the field in the closed shadow root")
	}
	b := e.connect(hostcdp.Options{})
	in := e.inspect(b, "127.0.0.1", fill.FieldPassword)
	wantKind(t, in, fill.FieldPassword)
	secret := e.secret()
	wantInserted(t, e.insert(b, in, secret))
	if !valueIs(t, tb.ctx, `function(v){return window.inner.getElementById('pw').value===v}`, secret) {
		t.Errorf("password field in the closed shadow root: value differed")
	}

	// The focus moves to another field of the same closed root between
	// inspect and insert: the in-page insert, given the roots, sees it.
	in = e.inspect(b, "127.0.0.1", fill.FieldPassword)
	tb.evalBool(`window.inner.getElementById('pw').value = ''; window.inner.getElementById('user').focus(); true`)
	wantRefused(t, e.insert(b, in, e.secret()), "focus_moved")
	if !tb.evalBool(`window.inner.getElementById('user').value === '' && window.inner.getElementById('pw').value === ''`) {
		t.Errorf("a field changed after focus moved")
	}
}

func spoofingPageCannotFoolTheChecks(t *testing.T, e *env) {
	tb := e.openTab(e.originA + "/spoof")
	if !tb.evalBool(`document.activeElement === document.getElementById('pw') && document.getElementById('user').type === 'password'`) {
		t.Fatalf("the spoofing page's overrides are not in place")
	}
	// The user is in the username field; the page claims it is the
	// password field.
	tb.click(100, 35)
	b := e.connect(hostcdp.Options{})
	in := e.inspect(b, "127.0.0.1", fill.FieldPassword)
	if in.Field.Kind != fill.FieldOther {
		t.Fatalf("the main world's lies fooled the probe: field %+v, want other", in.Field)
	}
	// Even if the inspection were trusted, the insert checks again in
	// its own world: kind_changed.
	forged := in
	forged.Field.Kind = fill.FieldPassword
	secret := e.secret()
	wantRefused(t, e.insert(b, forged, secret), "kind_changed")
	if !allEmpty(t, tb.ctx) {
		t.Fatalf("something was typed although the insert was refused")
	}

	// Now the real password field: the value goes in, and the page's
	// hooked setter, execCommand and Map never see it.
	tb.click(100, 95)
	in = e.inspect(b, "127.0.0.1", fill.FieldPassword)
	wantKind(t, in, fill.FieldPassword)
	wantInserted(t, e.insert(b, in, secret))
	if !fieldIs(t, tb.ctx, "pw", secret) {
		t.Errorf("password field: value differed")
	}
	if !valueIs(t, tb.ctx, `function(v){return !window.stolen.some(s => s.includes(v) || s.startsWith('exec:') || s === 'map')}`, secret) {
		t.Errorf("the page's main-world hooks saw the value or were used")
	}
}

func iframeNavigatedBeforeInsert(t *testing.T, e *env) {
	tb := e.openTab(e.originA + "/frame?src=" + e.originB + "/password")
	tb.clickInFrame(e.frameCtx(e.originB+"/password"), 100, 95, "pw")
	b := e.connect(hostcdp.Options{})
	in := e.inspect(b, "127.0.0.2", fill.FieldPassword)
	// The iframe now shows a same-origin (in-process) page instead.
	tb.eval(`document.getElementById('f').src = ` + quote(e.originA+"/password") + `; true`)
	if !tb.becomes(`(() => { try { return document.getElementById('f').contentDocument.readyState === 'complete' } catch { return false } })()`) {
		t.Fatalf("the iframe did not load")
	}
	// The new page, now in the top page's process, painted once before
	// the click: a click dispatched while the frame is still being swapped
	// out of its old process was never acknowledged (a CI run hung 8
	// minutes in Input.dispatchMouseEvent here).
	tb.eval(`new Promise((r) => { const w = document.getElementById('f').contentWindow; w.requestAnimationFrame(() => w.requestAnimationFrame(() => r(true))); })`)
	tb.click(100, 95)
	wantRefused(t, e.insert(b, in, e.secret()), "origin_changed")
}

func tabClosedBeforeInsert(t *testing.T, e *env) {
	keep := e.openTab(e.originB + "/password") // another user tab, must survive
	tb, b, in := e.onPassword()
	e.closeTab(tb.id)
	wantRefused(t, e.insert(b, in, e.secret()), "tab_gone")
	_ = keep
}

func severalTabs(t *testing.T, e *env) {
	a := e.openTab(e.originA + "/password")
	a.click(100, 95)
	bt := e.openTab(e.originB + "/otp")
	bt.click(100, 95)
	b := e.connect(hostcdp.Options{})

	// The service picks the tab.
	in := e.inspect(b, "127.0.0.1", fill.FieldPassword)
	if in.Origin() != e.originA {
		t.Fatalf("service 127.0.0.1 chose %s", in.Origin())
	}
	in = e.inspect(b, "127.0.0.2", fill.FieldOTP)
	if in.Origin() != e.originB {
		t.Fatalf("service 127.0.0.2 chose %s", in.Origin())
	}
	secret := e.secret()
	wantInserted(t, e.insert(b, in, secret))
	if !takeField(t, bt.ctx, "otp", secret) {
		t.Errorf("one-time-code field of the second tab: value differed")
	}
	if !allEmpty(t, a.ctx) {
		t.Errorf("the other tab was filled")
	}

	// No tab of the service: refused, naming only origins.
	_, err := b.Inspect(e.step(), fill.Request{Service: "example.com"})
	wantCDPError(t, err, hostcdp.ReasonNoMatch, fill.StatusRefused)
	if !strings.Contains(err.Error(), e.originA) || !strings.Contains(err.Error(), e.originB) || strings.Contains(err.Error(), "/password") {
		t.Errorf("the error should list the candidates' origins only: %v", err)
	}

	// Two tabs of the same service, both focused on a password field:
	// ambiguous, unless --tab names one.
	a2 := e.openTab(e.originA + "/password")
	a2.click(100, 95)
	_, err = b.Inspect(e.step(), fill.Request{Service: "127.0.0.1", Field: fill.FieldPassword})
	wantCDPError(t, err, hostcdp.ReasonAmbiguous, fill.StatusRefused)

	pinned := e.connect(hostcdp.Options{Tab: string(a2.id)})
	in = e.inspect(pinned, "127.0.0.1", fill.FieldPassword)
	secret2 := e.secret()
	wantInserted(t, e.insert(pinned, in, secret2))
	if !fieldIs(t, a2.ctx, "pw", secret2) || !allEmpty(t, a.ctx) {
		t.Errorf("--tab did not pick the named tab")
	}
	_, err = e.connect(hostcdp.Options{Tab: "0123456789ABCDEF0123456789ABCDEF"}).Inspect(e.step(), fill.Request{Service: "127.0.0.1"})
	wantCDPError(t, err, hostcdp.ReasonTabNotFound, fill.StatusRefused)
}

func wantCDPError(t testing.TB, err error, reason hostcdp.Reason, status fill.Status) {
	t.Helper()
	var ce *hostcdp.Error
	if !errors.As(err, &ce) || ce.Reason != reason || ce.Status() != status {
		t.Fatalf("error = %v, want reason %q (%s)", err, reason, status)
	}
}

func closeLeavesTheTabOpen(t *testing.T, e *env) {
	tb := e.openTab(e.originA + "/password")
	tb.click(100, 95)
	for range 3 {
		b := e.connect(hostcdp.Options{})
		e.inspect(b, "127.0.0.1", fill.FieldPassword)
		if err := b.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
	}
	if !tb.evalBool(`document.getElementById('pw') !== null`) {
		t.Fatalf("the tab lost its page")
	}
	// checkUserTabs (at cleanup) asserts the tab is still listed.
}

// detachOnCancelIsWhatKeepsTabs shows the test above can fail: the
// same chromedp attach without WithDetachOnCancel closes the tab when its
// context is cancelled (on a throw-away tab the test opens for this).
func detachOnCancelIsWhatKeepsTabs(t *testing.T, e *env) {
	victim := e.openTab(e.originA + "/password")
	delete(e.user, victim.id) // expected to close
	ctx, cancel := chromedp.NewContext(e.bctx, chromedp.WithTargetID(victim.id))
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("attach: %v", err)
	}
	cancel()
	for _, id := range e.pageTargets() {
		if id == victim.id {
			t.Fatalf("without WithDetachOnCancel the tab stayed open: the control is broken")
		}
	}

	kept := e.openTab(e.originA + "/password")
	ctx, cancel = chromedp.NewContext(e.bctx, chromedp.WithTargetID(kept.id), chromedp.WithDetachOnCancel())
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("attach: %v", err)
	}
	cancel()
	found := false
	for _, id := range e.pageTargets() {
		found = found || id == kept.id
	}
	if !found {
		t.Fatalf("with WithDetachOnCancel the tab was closed")
	}
}

func promptInCDPTab(t *testing.T, e *env) {
	tb := e.openTab(e.originA + "/password")
	tb.click(100, 95)
	b := e.connect(hostcdp.Options{Opener: hostcdp.OpenerCDPTab})
	beforeIDs := e.pageTargets()
	before := len(beforeIDs)
	promptURL := e.originA + "/otp" // stands in for the loopback prompt page
	win, err := b.OpenPrompt(e.step(), promptURL)
	if err != nil {
		t.Fatalf("open prompt: %v", err)
	}
	if got := len(e.pageTargets()); got != before+1 {
		t.Fatalf("%d page targets after opening the prompt, want %d", got, before+1)
	}
	// The prompt tab is not a candidate for the fill: with it open and
	// focused, the user's tab is still the one chosen.
	tb.front()
	tb.click(100, 95)
	in := e.inspect(b, "127.0.0.1", fill.FieldPassword)
	if in.Field.Kind != fill.FieldPassword {
		t.Fatalf("inspection after opening the prompt: %+v", in.Field)
	}
	// The human closes the prompt tab: Closed fires.
	var promptID string
	for _, id := range e.pageTargets() {
		if !slices.Contains(beforeIDs, id) {
			promptID = string(id)
		}
	}
	if promptID == "" {
		t.Fatalf("prompt tab not found")
	}
	e.user[targetID(promptID)] = true
	e.closeTab(targetID(promptID))
	select {
	case <-win.Closed():
	case <-e.step().Done():
		t.Fatalf("Closed did not fire when the prompt tab closed")
	}
	if err := win.Close(e.step()); err != nil {
		t.Fatalf("close after the tab is gone: %v", err)
	}

	// fillgate closes its own prompt tab, and only that one.
	win, err = b.OpenPrompt(e.step(), promptURL)
	if err != nil {
		t.Fatalf("open prompt: %v", err)
	}
	if err := win.Close(e.step()); err != nil {
		t.Fatalf("close prompt: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(e.pageTargets()) != before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := len(e.pageTargets()); got != before {
		t.Fatalf("%d page targets after closing the prompt, want %d", got, before)
	}
	if _, err := b.OpenPrompt(e.step(), "https://example.com/"); err == nil {
		t.Fatalf("a non-loopback prompt URL was opened")
	}
}

func promptWithSystemOpener(t *testing.T, e *env) {
	var opened []string
	b := e.connect(hostcdp.Options{OpenURL: func(_ context.Context, url string) error {
		opened = append(opened, url)
		return nil
	}})
	before := len(e.pageTargets())
	win, err := b.OpenPrompt(e.step(), e.originA+"/otp")
	if err != nil {
		t.Fatalf("open prompt: %v", err)
	}
	if len(opened) != 1 || opened[0] != e.originA+"/otp" {
		t.Fatalf("system opener got %v", opened)
	}
	if win.Closed() != nil {
		t.Fatalf("the system opener cannot tell when the prompt closes; Closed must be nil")
	}
	if got := len(e.pageTargets()); got != before {
		t.Fatalf("the system opener path opened a tab in the CDP browser")
	}
	if err := win.Close(e.step()); err != nil {
		t.Fatal(err)
	}
	fail := e.connect(hostcdp.Options{OpenURL: func(context.Context, string) error { return fmt.Errorf("no opener") }})
	if _, err := fail.OpenPrompt(e.step(), e.originA+"/otp"); err == nil || strings.Contains(err.Error(), "/otp") {
		t.Fatalf("opener failure: %v (must fail without quoting the URL)", err)
	}
}

// cancelWhileOpeningThePromptTab cancels OpenPrompt the moment the
// browser reports the new tab, before its Target.createTarget answer can
// reach fillgate: the tab must not be left open. (A call cut short there
// used to return an error and forget the tab it had made.)
func cancelWhileOpeningThePromptTab(t *testing.T, e *env) {
	b := e.connect(hostcdp.Options{Opener: hostcdp.OpenerCDPTab})
	before := e.pageTargets()
	created := make(chan struct{}, 16)
	chromedp.ListenBrowser(e.bctx, func(ev any) {
		if _, ok := ev.(*target.EventTargetCreated); ok {
			select {
			case created <- struct{}{}:
			default:
			}
		}
	})
	if _, err := cdp.Call(e.ctx, chromedp.FromContext(e.bctx).Browser, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		t.Fatalf("discover targets: %v", err)
	}
	for len(created) > 0 {
		<-created
	}

	cut := 0
	for i := 0; i < 10 && cut < 3; i++ {
		ctx, cancel := context.WithCancel(e.ctx)
		go func() {
			select {
			case <-created:
				cancel()
			case <-ctx.Done():
			}
		}()
		win, err := b.OpenPrompt(ctx, e.originA+"/otp")
		cancel()
		if err != nil {
			cut++
		} else if err := win.Close(e.step()); err != nil {
			t.Fatalf("close the prompt: %v", err)
		}
		// Closing is asynchronous: give the tab a moment to go.
		deadline := time.Now().Add(5 * time.Second)
		for len(e.pageTargets()) != len(before) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if left := e.pageTargets(); len(left) != len(before) {
			for _, id := range left {
				if !slices.Contains(before, id) {
					e.user[id] = true
					e.closeTab(id)
				}
			}
			t.Fatalf("a prompt tab was left open after OpenPrompt was cancelled (err %v)", err)
		}
		for len(created) > 0 {
			<-created
		}
	}
	if cut == 0 {
		t.Fatalf("no OpenPrompt call was cut short by the cancellation: the test did not exercise the case")
	}
}
