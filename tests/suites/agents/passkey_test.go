//go:build linux

package agents

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/zalando/go-keyring"

	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/agenttools"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/desktop"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/hostwait"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/rp"
)

// passkeyTitle starts the title of the native dialog that asks the person
// to approve one sign-in with the agents' passkey
// (internal/nativeprompt/texts.go).
const passkeyTitle = "fillgate — sign in with the agents' passkey on "

// pkRig is an attack rig (the person's Chromium with a debugging port,
// the extension, the host it starts, a private X display for the native
// dialog, a real gnome-keyring) with a WebAuthn relying party (tests/kit/rp,
// go-webauthn) where the person enrolled a passkey for the agents, and
// the agent's three MCP servers on one SDK client: Playwright MCP,
// chrome-devtools-mcp and `fillgate mcp`.
type pkRig struct {
	*attacker
	mcp      *agenttools.Server
	site     *rp.Server
	svc      string          // localhost:PORT
	tb       *tab            // the site's tab, in front, over the test's own CDP session
	worker   context.Context // the extension's service worker, over the test's own CDP session
	ours     []byte          // the agents' passkey's credential id
	progress progressLog     // every progress notification of fillgate mcp
}

// TestAgentsPasskey: passkeys for agents, driven by the agent's real
// tools against a real relying party. The agent's browser has a debugging
// port, so a program drives it and could make an armed tab's passkey call
// itself: under the person's default (driven = "clean-room") fillgate
// refuses passkeys there, enrolment and sign-in alike, with the fix and
// before anyone is asked. The person's policy then allows them for the
// site (driven = "in-page"), approved each time in the native dialog; the
// person enrols a passkey for the agents (`fillgate passkey add`,
// approved in the dialog, the site's own button); then:
//
//   - the default refuses again: no dialog, no arm, nothing signed;
//   - in the page, approval = "none" is no approval: the person is asked
//     (and cancels);
//   - the agent's real flow: request_secret {field passkey, no_wait}
//     answers armed only once the person approved in the dialog; the
//     agent clicks the site's passkey button with Playwright MCP's
//     browser_click; the site verifies the assertion and its count, the
//     page shows the login and the outcome ok reaches the audit log.
//     chrome-devtools-mcp reads the page, its network and console while
//     the tab is armed and after the sign-in;
//   - the person cancels in the dialog: cancelled, no arm;
//   - attacks by a prompt-injected agent with the same tools: the armed
//     call made by the agent itself (the known limit: one sign-in, no
//     more), calls from frames it injects, reading and hooking the
//     extension's service worker, and arming without the person from the
//     extension's pages and its worker: the popup's page opened in a tab
//     gets no answer to the popup's messages and cannot pause fillgate,
//     and a host it connects itself, playing the extension, is refused
//     as a second connection (audit event second_connection) while the
//     extension's own host goes on.
//
// Every tool result and progress message, every file under the rig's
// root, fillgate's outputs, log and audit log, the browser's output and
// the keyring's other items and index are scanned for the private key in
// every form.
func TestAgentsPasskey(t *testing.T) {
	began := time.Now()
	defer func() { t.Logf("TestAgentsPasskey took %s", time.Since(began).Round(time.Second)) }()
	ctx := testContext(t, 6*time.Minute)
	a := newAttackRig(t, ctx) // t.Setenv: not parallel
	p := &pkRig{attacker: &attacker{a: a, tools: a.attachTools(t)}}
	p.mcp = a.fillgateMCP(t, p.tools.d)
	p.site = rp.Start(t, rp.Options{})
	u, err := url.Parse(p.site.URL)
	if err != nil {
		t.Fatal(err)
	}
	p.svc = "localhost:" + u.Port()
	a.writePolicy(p.policy("each", ""))
	info, err := browser.WaitTarget(ctx, a.bctx, "service_worker", manifest.ExtensionOrigin)
	if err != nil {
		t.Fatal(err)
	}
	p.worker, _ = chromedp.NewContext(a.bctx, chromedp.WithTargetID(info.TargetID))
	p.tb = a.open(t, &site{origin: p.site.URL}, "/")
	p.enrolRefused(t)
	a.writePolicy(p.policy("each", drivenInPage))
	p.enrol(t)
	m := p.tools.mark(t)

	t.Run("the default refuses: the program driving the browser could make the call", p.defaultRefuses)
	t.Run("in the page, approval none still asks the person", p.noneStillAsks)
	t.Run("the agent signs in: armed after the dialog, then browser_click", p.agentSignsIn)
	t.Run("the person cancels: cancelled, no arm", p.personCancels)
	t.Run("attack: the agent makes the armed call itself, once", p.attackArmedCall)
	t.Run("attack: calls from frames the agent injects", p.attackFrames)
	t.Run("attack: the extension's service worker, read and hooked", p.attackWorker)
	t.Run("attack: arming without the person", p.attackUnapproved)

	p.leakScan(t, m)
}

// drivenInPage is the policy line that allows passkeys (and typing into
// the page) in the agent's browser, which a program drives.
const drivenInPage = `driven = "in-page"`

// policy is the rig's policy with the site's approval and one more line
// for its service (drivenInPage, or "": the default, the clean room).
func (p *pkRig) policy(approval, line string) string {
	return attackPolicy(gtk2, "", fmt.Sprintf("[service.%q]\napproval = %q\n%s\n", p.svc, approval, line))
}

// wantDrivenRefusal checks the refusal of a passkey in the agent's browser
// under the default: refused, with the fix.
func (p *pkRig) wantDrivenRefusal(t testing.TB, res fill.Result) {
	t.Helper()
	if res.Status != fill.StatusRefused || res.Field != fill.FieldPasskey || !strings.Contains(res.Detail, "a program drives this browser") ||
		!strings.Contains(res.Detail, `set driven = "in-page" for `+p.svc) || !strings.Contains(res.Detail, "approve each use in the dialog") {
		t.Errorf("result %+v; want the passkey refused in a driven browser, with the fix (driven = \"in-page\", each use approved)", res)
	}
}

// enrolRefused: under the default, `fillgate passkey add` is refused at
// once, with the fix: no dialog, no arm, nothing registered.
func (p *pkRig) enrolRefused(t *testing.T) {
	t.Helper()
	a := p.a
	cmd := exec.CommandContext(a.ctx, fillgateBin, "passkey", "add", "--service", p.svc, "--account", "ada", "--json")
	cmd.Env = a.env
	run := fgrun.Start(t, cmd)
	a.noDialogUntil(t, run.Done(), "a passkey is refused in a driven browser under the default")
	res, _, err := run.Result(a.ctx)
	a.Keep(run.Stdout(), run.Stderr())
	if err != nil {
		t.Fatalf("fillgate passkey add: %v", err)
	}
	p.wantDrivenRefusal(t, res)
	if n := p.arms(t); n != 0 || len(p.site.Registrations()) != 0 {
		t.Fatalf("after the refusal: %d arms, %d registrations; want none", n, len(p.site.Registrations()))
	}
}

// enrol has the person add the agents' passkey for ada: `fillgate passkey
// add`, approved in the native dialog, then the site's own button.
func (p *pkRig) enrol(t *testing.T) {
	t.Helper()
	a := p.a
	cmd := exec.CommandContext(a.ctx, fillgateBin, "passkey", "add", "--service", p.svc, "--account", "ada", "--json")
	cmd.Env = a.env
	run := fgrun.Start(t, cmd)
	w := p.dialog(t, run.Done(), "fillgate — add a passkey for your agents on "+p.svc)
	a.answer(t, w, "Tab", "Return")
	p.waitArms(t, 1)
	if got := p.clickAsPerson(t, "add"); got != "passkey added" {
		t.Fatalf("enrol: the page says %q", got)
	}
	res, code, err := run.Result(a.ctx)
	a.Keep(run.Stdout(), run.Stderr())
	if err != nil || code != 0 || res.Status != fill.StatusOK || res.Field != fill.FieldPasskey {
		t.Fatalf("fillgate passkey add: %+v (exit %d), %v", res, code, err)
	}
	regs := p.site.Registrations()
	if len(regs) != 1 || regs[0].User != "ada" || regs[0].AttestationFormat != "none" {
		t.Fatalf("the site registered %+v", regs)
	}
	p.ours = regs[0].CredentialID
	p.needles(t)
}

// needles adds the private key, in every form, to the rig's secrets: every
// agent tool result from now on, and the rig's final scan (every file
// under its root, the browser's output, everything fillgate printed),
// look for them. The forms: PKCS#8 DER and the raw scalar (leakscan adds
// their URL-escaped, hex, base64 and base64url forms and UTF-16), their
// unpadded standard base64 and upper-case hex, and the keyring item's
// whole value.
func (p *pkRig) needles(t *testing.T) {
	t.Helper()
	it, err := keychain.NewPasskeyItem(p.svc, "ada")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := keychain.OS().Get(p.a.ctx, it)
	if err != nil {
		t.Fatalf("the passkey is not in the keyring: %v", err)
	}
	var kept struct{ Key []byte }
	if err := json.Unmarshal(raw, &kept); err != nil || len(kept.Key) == 0 {
		t.Fatalf("the keyring item holds no key: %v", err)
	}
	priv, err := x509.ParsePKCS8PrivateKey(kept.Key)
	if err != nil {
		t.Fatal("the keyring item's key is not PKCS#8")
	}
	ec, ok := priv.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatal("the keyring item's key is not an ECDSA key")
	}
	scalar, err := ec.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range [][]byte{kept.Key, scalar} {
		p.a.Add(bytes.Clone(k), []byte(base64.RawStdEncoding.EncodeToString(k)), []byte(strings.ToUpper(hex.EncodeToString(k))))
	}
	p.a.Add(raw)
	clear(kept.Key)
	clear(scalar)
}

// dialog waits, while done is open, for fillgate's native dialog, whose
// title must start with title, with the keyboard.
func (p *pkRig) dialog(t testing.TB, done <-chan struct{}, title string) desktop.Window {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.a.ctx, 30*time.Second)
	defer cancel()
	ctx, stop := whileOpen(ctx, done)
	defer stop()
	w, err := p.a.person.WaitDialog(ctx)
	if err != nil {
		p.a.logTail(t)
		t.Fatalf("no native dialog: %v", err)
	}
	if !strings.HasPrefix(w.Name, title) {
		t.Errorf("the native dialog's title is %q; want it to start with %q", w.Name, title)
	}
	return w
}

// arms is how many tabs the extension's worker holds armed, as the test
// sees it over its own CDP session.
func (p *pkRig) arms(t testing.TB) int {
	t.Helper()
	n, err := chromedp.Run(p.worker, chromedp.Evaluate[int](`passkeyArms.size`))
	if err != nil {
		t.Fatalf("read the worker's arms: %v", err)
	}
	return n
}

// waitArms waits until the worker holds n arms.
func (p *pkRig) waitArms(t testing.TB, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.a.ctx, 30*time.Second)
	defer cancel()
	if err := poll.Until(ctx, 20*time.Millisecond, func() (bool, error) {
		v, err := chromedp.Run(p.worker, chromedp.Evaluate[int](`passkeyArms.size`))
		return v == n, err
	}); err != nil {
		t.Fatalf("the worker never held %d arms: %v", n, err)
	}
}

// clickAsPerson presses a button of the site's tab, over the test's own
// CDP session, and returns what the page then says.
func (p *pkRig) clickAsPerson(t testing.TB, button string) string {
	t.Helper()
	if _, err := chromedp.Run(p.tb.ctx, chromedp.Evaluate[bool](`document.getElementById("status").textContent = "", document.getElementById(`+quote(button)+`).click(), true`)); err != nil {
		t.Fatal(err)
	}
	return p.status(t, "")
}

// status waits until the page's status is not empty (or, with want, is
// want) and returns it.
func (p *pkRig) status(t testing.TB, want string) string {
	t.Helper()
	var got string
	ctx, cancel := context.WithTimeout(p.a.ctx, 20*time.Second)
	defer cancel()
	_ = poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		v, err := chromedp.Run(p.tb.ctx, chromedp.Evaluate[string](`document.getElementById("status")?.textContent ?? ""`))
		got = v
		return v != "" && (want == "" || v == want), err
	})
	return got
}

// signCount is the count the site keeps for the agents' passkey.
func (p *pkRig) signCount() uint32 { return p.site.SignCount(p.ours) }

// ask is the agent's request_secret {service, field passkey, no_wait},
// with the site's page freshly loaded in front, as the person left it.
func (p *pkRig) ask(t testing.TB) *agenttools.Call {
	t.Helper()
	p.tb.t = t
	if err := chromedp.Do(p.tb.ctx, chromedp.Navigate(p.tb.url)); err != nil {
		t.Fatalf("load the site's page: %v", err)
	}
	p.tb.front()
	call, err := p.mcp.Start("request_secret", map[string]any{"service": p.svc, "field": "passkey", "no_wait": true},
		agenttools.CallOptions{OnProgress: p.progress.add})
	if err != nil {
		t.Fatal(err)
	}
	return call
}

// armWithPerson is the agent's request, approved by the person in the
// native dialog: armed comes only after the approval, and the worker then
// holds the tab's arm.
func (p *pkRig) armWithPerson(t testing.TB) fill.Result {
	t.Helper()
	call := p.ask(t)
	w := p.dialog(t, call.Done(), passkeyTitle+p.svc)
	select {
	case <-call.Done():
		t.Fatal("request_secret answered before the person approved")
	default:
	}
	if n := p.arms(t); n != 0 {
		t.Fatalf("%d arms before the person approved", n)
	}
	p.a.answer(t, w, "Tab", "Return") // Cancel has the focus, then Approve
	res := p.result(t, call)
	if res.Status != fill.StatusArmed || res.Origin != p.site.URL || res.Field != fill.FieldPasskey || !strings.Contains(res.Detail, "the tab is armed") {
		t.Fatalf("result %+v; want armed on %s", res, p.site.URL)
	}
	if n := p.arms(t); n != 1 {
		t.Fatalf("%d arms after armed; want the site's tab", n)
	}
	return res
}

// result waits for a request_secret call, scans its result, and decodes it.
func (p *pkRig) result(t testing.TB, call *agenttools.Call) fill.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.a.ctx, 60*time.Second)
	defer cancel()
	res, err := call.Wait(ctx)
	if err != nil {
		t.Fatalf("request_secret: %v", err)
	}
	raw, _ := json.Marshal(res)
	for _, s := range p.a.allSecrets() {
		leakscan.Bytes(t, s, "request_secret's result", raw)
	}
	return mcpResult(t, res)
}

// pwTab selects the site's tab in Playwright MCP, as the agent would.
func (p *pkRig) pwTab(t testing.TB) {
	t.Helper()
	tabs, _ := p.call(t, p.tools.pw, "browser_tabs", map[string]any{"action": "list"}, false)
	i, ok := listIndex(tabs, `(?m)^- (\d+): .*`, "s="+p.tb.token)
	if !ok {
		t.Fatalf("Playwright MCP does not list the site's tab")
	}
	p.call(t, p.tools.pw, "browser_tabs", map[string]any{"action": "select", "index": i}, false)
}

// signInButton finds the site's passkey button in Playwright MCP's
// snapshot.
var signInButton = regexp.MustCompile(`button "Sign in with a passkey"[^\n]*?\[ref=((?:f\d+)?e\d+)\]`)

// clickSignIn has the agent click the site's passkey button with
// browser_click and wait for the page to show the login.
func (p *pkRig) clickSignIn(t testing.TB) {
	t.Helper()
	p.pwTab(t)
	snap, _ := p.call(t, p.tools.pw, "browser_snapshot", map[string]any{}, false)
	m := signInButton.FindStringSubmatch(snap)
	if m == nil {
		t.Fatalf("the snapshot has no passkey button: %s", p.a.Withheld([]byte(snap)))
	}
	p.call(t, p.tools.pw, "browser_click", map[string]any{"target": m[1], "element": "Sign in with a passkey button"}, false)
	if got := p.status(t, "welcome ada"); got != "welcome ada" {
		t.Fatalf("after the agent's click the page says %q", got)
	}
}

// wantLogin checks the site's last login: the agents' passkey at count,
// verified by the person (approval each).
func (p *pkRig) wantLogin(t testing.TB, logins int, count uint32) {
	t.Helper()
	got := p.site.Logins()
	if len(got) != logins {
		t.Fatalf("the site let in %d logins; want %d", len(got), logins)
	}
	last := got[len(got)-1]
	if !bytes.Equal(last.CredentialID, p.ours) || last.User != "ada" || !last.UserVerified || p.signCount() != count {
		t.Fatalf("the site's last login %+v at count %d; want the agents' passkey at %d, user verified", last, p.signCount(), count)
	}
}

// wantAudit waits for the audit log to hold n entries and checks the
// newest: a passkey request for the service with status (and, for ok,
// approved by the person).
func (p *pkRig) wantAudit(t testing.TB, n int, status fill.Status) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.a.ctx, 20*time.Second)
	defer cancel()
	var es []fill.AuditEntry
	_ = poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		var err error
		es, err = audit.Open(p.a.stateDir).Recent(n + 1)
		return len(es) >= n, err
	})
	if len(es) != n {
		t.Fatalf("the audit log has %d entries; want %d", len(es), n)
	}
	e := es[len(es)-1] // oldest first
	if e.Status != status || e.Field != fill.FieldPasskey || e.Service != p.svc ||
		(status == fill.StatusOK && (e.How != fill.HowApproved || e.Origin != p.site.URL)) {
		t.Fatalf("the newest audit entry %+v; want %s for the passkey of %s", e, status, p.svc)
	}
}

// auditCount is how many entries the audit log holds.
func (p *pkRig) auditCount(t testing.TB) int {
	t.Helper()
	es, err := audit.Open(p.a.stateDir).Recent(1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// defaultRefuses: with the person's policy back to the default for the
// site, the agent's request is refused with the fix, before anyone is
// asked: no dialog, no arm, nothing signed; the refusal is audited.
func (p *pkRig) defaultRefuses(t *testing.T) {
	p.a.writePolicy(p.policy("each", ""))
	defer p.a.writePolicy(p.policy("each", drivenInPage))
	audits, count := p.auditCount(t), p.signCount()
	call := p.ask(t)
	p.a.noDialogUntil(t, call.Done(), "a passkey is refused in a driven browser under the default")
	p.wantDrivenRefusal(t, p.result(t, call))
	if n := p.arms(t); n != 0 {
		t.Errorf("%d arms after the refusal", n)
	}
	p.wantAudit(t, audits+1, fill.StatusRefused)
	if got := p.agentGet(t); !strings.HasPrefix(got, "not answered") {
		t.Errorf("the agent's own get() after the refusal: %s", got)
	}
	if p.signCount() != count {
		t.Error("the agents' passkey signed after the refusal")
	}
}

// noneStillAsks: in the page, the person's approval = "none" for the site
// does not let the passkey sign without them: the dialog asks, and the
// person cancels.
func (p *pkRig) noneStillAsks(t *testing.T) {
	p.a.writePolicy(p.policy("none", drivenInPage))
	defer p.a.writePolicy(p.policy("each", drivenInPage))
	audits, count := p.auditCount(t), p.signCount()
	call := p.ask(t)
	w := p.dialog(t, call.Done(), passkeyTitle+p.svc)
	if n := p.arms(t); n != 0 {
		t.Errorf("%d arms before the person answered", n)
	}
	p.a.answer(t, w, "Escape")
	if res := p.result(t, call); res.Status != fill.StatusCancelled {
		t.Errorf("result %+v; want cancelled", res)
	}
	if n := p.arms(t); n != 0 {
		t.Errorf("%d arms after the person cancelled", n)
	}
	p.wantAudit(t, audits+1, fill.StatusCancelled)
	if p.signCount() != count {
		t.Error("the agents' passkey signed after the person cancelled")
	}
}

// agentSignsIn is the agent's real flow, with chrome-devtools-mcp
// attached as an observer while the tab is armed and after the sign-in.
func (p *pkRig) agentSignsIn(t *testing.T) {
	audits := p.auditCount(t)
	p.armWithPerson(t)
	cd := p.observe(t)
	p.clickSignIn(t)
	p.wantLogin(t, 1, 1)
	p.wantAudit(t, audits+1, fill.StatusOK)
	p.waitArms(t, 0)
	p.observeAfter(t, cd)
	if len(p.progress.all()) == 0 {
		t.Errorf("fillgate mcp sent no progress; the scan of progress messages read nothing")
	}
}

// observe has chrome-devtools-mcp read the armed tab as an observer:
// list_pages, a snapshot, an evaluate of what a page script can see of
// fillgate's door. It returns the tab's page id.
func (p *pkRig) observe(t testing.TB) int {
	t.Helper()
	list, _ := p.call(t, p.tools.cd, "list_pages", map[string]any{}, false)
	id, ok := listIndex(list, `(?m)^(\d+): .*`, "s="+p.tb.token)
	if !ok {
		t.Fatalf("chrome-devtools-mcp does not list the site's page: %s", p.a.Withheld([]byte(list)))
	}
	p.call(t, p.tools.cd, "take_snapshot", map[string]any{"pageId": id}, false)
	out, _ := p.call(t, p.tools.cd, "evaluate_script", map[string]any{"pageId": id, "function": `() => JSON.stringify({
  get: String(navigator.credentials.get), create: String(navigator.credentials.create),
  globals: Object.getOwnPropertyNames(window).filter((k) => /fillgate|passkey|arm/i.test(k)),
  body: document.body.innerText })`}, false)
	t.Logf("chrome-devtools-mcp, evaluate in the armed page: %s", p.a.Withheld([]byte(out)))
	return id
}

// observeAfter has chrome-devtools-mcp read the page, its network
// requests (the sign-in's /login/finish among them) and its console after
// the sign-in.
func (p *pkRig) observeAfter(t testing.TB, id int) {
	t.Helper()
	p.call(t, p.tools.cd, "take_snapshot", map[string]any{"pageId": id}, false)
	reqs, _ := p.call(t, p.tools.cd, "list_network_requests", map[string]any{"pageId": id}, false)
	m := regexp.MustCompile(`reqid=(\d+) POST \S*/login/finish`).FindStringSubmatch(reqs)
	if m == nil {
		t.Fatalf("chrome-devtools-mcp lists no POST /login/finish: %s", p.a.Withheld([]byte(reqs)))
	}
	n, _ := strconv.Atoi(m[1])
	body, _ := p.call(t, p.tools.cd, "get_network_request", map[string]any{"pageId": id, "reqid": n}, false)
	if !strings.Contains(body, "authenticatorData") {
		t.Errorf("the sign-in's request, as chrome-devtools-mcp shows it, holds no assertion: the scan proves little")
	}
	p.call(t, p.tools.cd, "list_console_messages", map[string]any{"pageId": id}, false)
}

// personCancels: the agent asks, the person presses Escape: cancelled
// (isError), no arm, nothing signed.
func (p *pkRig) personCancels(t *testing.T) {
	audits, count := p.auditCount(t), p.signCount()
	call := p.ask(t)
	w := p.dialog(t, call.Done(), passkeyTitle+p.svc)
	p.a.answer(t, w, "Escape")
	if res := p.result(t, call); res.Status != fill.StatusCancelled {
		t.Errorf("result %+v; want cancelled", res)
	}
	if n := p.arms(t); n != 0 {
		t.Errorf("%d arms after the person cancelled", n)
	}
	p.wantAudit(t, audits+1, fill.StatusCancelled)
	if got := p.agentGet(t); !strings.HasPrefix(got, "not answered") {
		t.Errorf("the agent's own get() after a cancel: %s", got)
	}
	if p.signCount() != count {
		t.Error("the agents' passkey signed after the person cancelled")
	}
}

// agentGetJS is the agent's own navigator.credentials.get() in the page,
// with a challenge of its own and the frame's own relying party, given up
// after 4 s.
const agentGetJS = `async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 4000);
  try {
    const c = await navigator.credentials.get({ publicKey: { challenge: crypto.getRandomValues(new Uint8Array(32)), timeout: 4000 }, signal: ac.signal });
    return "answered: " + (c?.type ?? "nothing");
  } catch (e) { return "not answered: " + e.name; }
}`

// agentGet has the agent call get() in the site's tab with
// browser_evaluate and returns what it got.
func (p *pkRig) agentGet(t testing.TB) string {
	t.Helper()
	p.pwTab(t)
	out, _ := p.call(t, p.tools.pw, "browser_evaluate", map[string]any{"function": agentGetJS}, false)
	m := regexp.MustCompile(`(?:not )?answered: \w+`).FindString(out)
	if m == "" {
		t.Fatalf("browser_evaluate returned no outcome: %s", p.a.Withheld([]byte(out)))
	}
	return m
}

// armedCallJS is the agent signing in by itself in the armed tab: it
// asks the site for a challenge, makes the page's one call, and posts the
// assertion to the site.
const armedCallJS = `async () => {
  const enc = (b) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const dec = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const post = (path, body) => fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const { publicKey } = await (await post("/login/begin", { user: "ada" })).json();
  publicKey.challenge = dec(publicKey.challenge);
  for (const c of publicKey.allowCredentials || []) c.id = dec(c.id);
  const cred = await navigator.credentials.get({ publicKey });
  const r = cred.response;
  const fin = await post("/login/finish", { id: cred.id, rawId: enc(cred.rawId), type: cred.type, clientExtensionResults: {},
    response: { clientDataJSON: enc(r.clientDataJSON), authenticatorData: enc(r.authenticatorData), signature: enc(r.signature),
      userHandle: r.userHandle ? enc(r.userHandle) : undefined } });
  return "the site says " + fin.status + " " + JSON.stringify(await fin.json());
}`

// attackArmedCall: while the tab is armed, the agent makes the one armed
// call itself (browser_evaluate), with the site's challenge it asked for:
// that is the one sign-in the person approved, and it works (docs/
// security.md: the known limit). A second call of its own is not
// answered, and no more is signed.
func (p *pkRig) attackArmedCall(t *testing.T) {
	audits, logins, count := p.auditCount(t), len(p.site.Logins()), p.signCount()
	p.armWithPerson(t)
	p.pwTab(t)
	out, _ := p.call(t, p.tools.pw, "browser_evaluate", map[string]any{"function": armedCallJS}, false)
	if !strings.Contains(out, `the site says 200 {\"ok\":true,\"user\":\"ada\"}`) && !strings.Contains(out, `the site says 200 {"ok":true,"user":"ada"}`) {
		t.Fatalf("the agent's own armed call: %s", p.a.Withheld([]byte(out)))
	}
	p.wantLogin(t, logins+1, count+1)
	p.wantAudit(t, audits+1, fill.StatusOK)
	p.waitArms(t, 0)
	if got := p.agentGet(t); !strings.HasPrefix(got, "not answered") {
		t.Errorf("the agent's second get(): %s; want it not answered", got)
	}
	if n := len(p.site.Logins()); n != logins+1 || p.signCount() != count+1 {
		t.Errorf("%d logins at count %d after the second call; want exactly one more", n-logins, p.signCount())
	}
	if n := p.auditCount(t); n != audits+1 {
		t.Errorf("%d audit entries after the second call; want one more than before", n-audits)
	}
}

// framesJS has the agent add two frames to the armed page, one of its
// own origin (srcdoc) and one of another (the login site on 127.0.0.2,
// allowed to use WebAuthn), and call get() in each with Playwright's
// frame API. It returns each frame's outcome.
const framesJS = `async (page) => {
  await page.evaluate((cross) => {
    for (const [id, src] of [["fg-same", ""], ["fg-cross", cross]]) {
      const f = document.createElement("iframe");
      f.id = id;
      f.allow = "publickey-credentials-get *";
      if (src) f.src = src; else f.srcdoc = "<p>agent's frame</p>";
      document.body.append(f);
    }
  }, %q);
  const get = %s;
  const out = {};
  for (const id of ["fg-same", "fg-cross"]) {
    const frame = await (await page.$("#" + id)).contentFrame();
    await frame.waitForLoadState();
    out[id] = await frame.evaluate(get);
  }
  return JSON.stringify(out);
}`

// attackFrames: while the tab is armed, get() calls from frames the
// agent injects are not answered by fillgate, and the arm stays for the
// page's own call, which the agent's click then makes.
func (p *pkRig) attackFrames(t *testing.T) {
	audits, logins, count := p.auditCount(t), len(p.site.Logins()), p.signCount()
	p.armWithPerson(t)
	p.pwTab(t)
	out, _ := p.call(t, p.tools.pw, "browser_run_code_unsafe",
		map[string]any{"code": fmt.Sprintf(framesJS, p.a.site2.origin+"/other?s=frame", agentGetJS)}, false)
	for _, id := range []string{"fg-same", "fg-cross"} {
		if !regexp.MustCompile(`\\?"` + id + `\\?":\\?"not answered: \w+`).MatchString(out) {
			t.Errorf("get() from the agent's frame %s: %s", id, p.a.Withheld([]byte(out)))
		}
	}
	t.Logf("get() from the agent's frames: %s", p.a.Withheld([]byte(out)))
	if n := p.arms(t); n != 1 || p.signCount() != count {
		t.Fatalf("after the frames' calls: %d arms, count %d; want the arm kept and nothing signed", n, p.signCount())
	}
	p.clickSignIn(t)
	p.wantLogin(t, logins+1, count+1)
	p.wantAudit(t, audits+1, fill.StatusOK)
}

// workerJS runs in the extension's service worker, reached by the agent
// through Playwright (the browser context's service workers): it reads
// everything of the arms and calls it can, the extension's storage, and
// (hook) wraps every handler of the host's requests to keep what the
// host sends from now on; or (read) returns what the hook kept.
const workerJS = `async (page) => {
  const sw = page.context().serviceWorkers().find((w) => w.url().startsWith(%q));
  if (!sw) return "no worker among " + JSON.stringify(page.context().serviceWorkers().map((w) => w.url()));
  return await sw.evaluate(async (what) => {
    if (what === "read") return "kept " + JSON.stringify(globalThis.__agentKept ?? null);
    const arms = [...passkeyArms].map(([tab, a]) => ({ tab, request: a.request, ceremony: a.ceremony, origin: a.origin, deadline: a.deadline }));
    globalThis.__agentKept = [];
    for (const [k, f] of Object.entries(handlers)) handlers[k] = async (m) => { __agentKept.push(JSON.stringify(m)); return f(m); };
    return "seen " + JSON.stringify({ arms, calls: [...passkeyCalls.keys()], local: await chrome.storage.local.get(null),
      session: await chrome.storage.session.get(null), host, leases, recent });
  }, %q);
}`

// attackWorker: while the tab is armed, the agent reads the extension's
// service worker (the arm: its request id, origin and deadline) and hooks
// its handlers of the host's requests; the page's sign-in then goes
// through the hook: no key material anywhere in what it saw.
func (p *pkRig) attackWorker(t *testing.T) {
	audits, logins, count := p.auditCount(t), len(p.site.Logins()), p.signCount()
	p.armWithPerson(t)
	p.pwTab(t)
	seen, _ := p.call(t, p.tools.pw, "browser_run_code_unsafe", map[string]any{"code": fmt.Sprintf(workerJS, manifest.ExtensionOrigin, "hook")}, false)
	if !strings.Contains(seen, "seen ") || !strings.Contains(seen, p.site.URL) {
		t.Fatalf("the agent did not reach the worker's arm: %s", p.a.Withheld([]byte(seen)))
	}
	t.Logf("what the agent read in the worker: %s", p.a.Withheld([]byte(seen)))
	p.clickSignIn(t)
	p.wantLogin(t, logins+1, count+1)
	p.wantAudit(t, audits+1, fill.StatusOK)
	kept, _ := p.call(t, p.tools.pw, "browser_run_code_unsafe", map[string]any{"code": fmt.Sprintf(workerJS, manifest.ExtensionOrigin, "read")}, false)
	if !strings.Contains(kept, "passkey_answer") || !strings.Contains(kept, "signature") {
		t.Fatalf("the agent's hook kept no passkey_answer: %s", p.a.Withheld([]byte(kept)))
	}
	// What the hook kept is scanned (call does); its kinds are logged.
	t.Logf("the host's requests the agent's hook kept: %v", slices.Compact(slices.Sorted(slices.Values(regexp.MustCompile(`passkey_\w+`).FindAllString(kept, -1)))))
}

// forgeJS has the agent arm the site's tab in the extension's worker
// itself, with a request id of its own, and tell the host a call came
// under it, then lets the page's get() (its own, with browser_evaluate)
// go through that forged arm.
const forgeJS = `async (page) => {
  const sw = page.context().serviceWorkers().find((w) => w.url().startsWith(%q));
  if (!sw) return "no worker";
  return await sw.evaluate(async (origin) => {
    const [tab] = await chrome.tabs.query({ url: origin + "/*" });
    const armed = await passkeyArm({ request: "agent-forged", ceremony: "get", origin, tab: tab?.id, deadline: new Date(Date.now() + 60000).toISOString() });
    post({ type: "passkey_called", request: "agent-forged-2", ceremony: "get", tab: tab?.id, frame: 0, origin, rp_id: "localhost",
      challenge: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", user_verification: "preferred", allow: [] });
    return "forged " + JSON.stringify(armed);
  }, %q);
}`

// extensionPageJS runs in the extension's own page (popup.html, opened in
// a tab by the agent): it messages the worker as the extension's pages
// may, asking it to arm and to take a call, and as the toolbar popup
// does: for the state (outcomes, leases), to pause fills and to end a
// lease.
const extensionPageJS = `async () => {
  const send = (m) => chrome.runtime.sendMessage(m).then((r) => JSON.stringify(r ?? null), (e) => "error " + e.message);
  const deadline = new Date(Date.now() + 60000).toISOString();
  return JSON.stringify({
    arm: await send({ type: "passkey_arm", request: "agent-page", ceremony: "get", origin: %q, deadline }),
    call: await send({ type: "passkey_call", call: { ceremony: "get", challenge: "AAAA", rp_id: "localhost" } }),
    state: await send({ type: "state" }),
    pause: await send({ type: "pause", paused: true }),
    end_lease: await send({ type: "end_lease", id: "agent-page" }),
  });
}`

// secondHostJS runs in the extension's own page opened in a tab: it
// connects a native-messaging host of its own and plays the extension
// (its hello, with the extension's own instance id from its storage),
// and reports whether the host hung up on it within 20 s, and the kinds
// of the messages the host sent it.
const secondHostJS = `async () => {
  const { instance } = await chrome.storage.local.get("instance");
  const port = chrome.runtime.connectNative("dev.fillgate.host");
  const got = [];
  port.onMessage.addListener((m) => got.push(String(m?.type ?? "?")));
  const gone = new Promise((resolve) => port.onDisconnect.addListener(() => resolve("hung up")));
  port.postMessage({ type: "hello", version: chrome.runtime.getManifest().version, user_agent: navigator.userAgent, paused: false, instance });
  const out = await Promise.race([gone, new Promise((resolve) => setTimeout(() => resolve("still connected"), 20000))]);
  if (out !== "hung up") port.disconnect();
  return "second host: " + out + " " + JSON.stringify({ got, instance: typeof instance });
}`

// attackUnapproved: nothing signs without the person. The agent opens the
// extension's popup page in a tab and messages the worker from it (the
// popup's messages get no answer there, and fills stay on); connects a
// host of its own from it, playing the extension (refused as a second
// connection, audited, while the extension's host goes on); arms the
// site's tab in the worker itself and tells the host of a call under a
// request of its own; then calls get() in the site's tab: nothing is
// answered, no dialog shows, nothing is signed, and the refused
// connection is all the audit log gains.
func (p *pkRig) attackUnapproved(t *testing.T) {
	audits, logins, count := p.auditCount(t), len(p.site.Logins()), p.signCount()
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		p.a.noDialogUntil(t, done, "nobody asked for an approval")
	}()
	stopWatch := sync.OnceFunc(func() { close(done); <-watched })
	defer stopWatch()
	p.call(t, p.tools.pw, "browser_tabs", map[string]any{"action": "new"}, false)
	p.call(t, p.tools.pw, "browser_navigate", map[string]any{"url": manifest.ExtensionOrigin + "popup.html"}, false)
	out, _ := p.call(t, p.tools.pw, "browser_evaluate", map[string]any{"function": fmt.Sprintf(extensionPageJS, p.site.URL)}, false)
	t.Logf("the worker, messaged from the extension's page: %s", p.a.Withheld([]byte(out)))
	if !strings.Contains(out, "state") || p.arms(t) != 0 {
		t.Errorf("messaging the worker from its page: %s, %d arms; want no arm", p.a.Withheld([]byte(out)), p.arms(t))
	}
	// The popup's messages from a tab: no state (its "connected" field),
	// no pause.
	if !strings.Contains(out, "end_lease") || strings.Contains(out, "connected") {
		t.Errorf("the worker answered the popup's messages from the popup's page in a tab: %s", p.a.Withheld([]byte(out)))
	}
	if paused, err := chromedp.Run(p.worker, chromedp.Evaluate[bool](`paused`)); err != nil || paused {
		t.Errorf("after the popup's page in a tab asked to pause: the worker's paused is %v (%v); want fills on", paused, err)
	}
	p.secondHost(t)
	tabs, _ := p.call(t, p.tools.pw, "browser_tabs", map[string]any{"action": "list"}, false)
	if i, ok := listIndex(tabs, `(?m)^- (\d+): .*`, "popup.html"); ok {
		p.call(t, p.tools.pw, "browser_tabs", map[string]any{"action": "close", "index": i}, false)
	}
	p.pwTab(t)
	forged, _ := p.call(t, p.tools.pw, "browser_run_code_unsafe", map[string]any{"code": fmt.Sprintf(forgeJS, manifest.ExtensionOrigin, p.site.URL)}, false)
	if !strings.Contains(forged, `forged {\"type\":\"armed\"`) && !strings.Contains(forged, `forged {"type":"armed"`) {
		t.Fatalf("the agent could not arm the worker itself (the attack did not run): %s", p.a.Withheld([]byte(forged)))
	}
	if got := p.agentGet(t); !strings.HasPrefix(got, "not answered") {
		t.Errorf("get() under the agent's own arm: %s; want it not answered", got)
	}
	stopWatch()
	if n := len(p.site.Logins()); n != logins || p.signCount() != count || p.auditCount(t) != audits+1 {
		t.Errorf("without the person: %d more logins, count %d (was %d), %d more audit entries; want nothing but the refused connection",
			n-logins, p.signCount(), count, p.auditCount(t)-audits)
	}
}

// secondHost has the agent, in the extension's page in the selected tab,
// connect a host of its own playing the extension: the host refuses it
// as a second connection from the same browser and profile (it hangs up
// and the audit log says so), and the extension's own host still serves
// it, connected.
func (p *pkRig) secondHost(t *testing.T) {
	t.Helper()
	a := p.a
	audits := p.auditCount(t)
	out, _ := p.call(t, p.tools.pw, "browser_evaluate", map[string]any{"function": secondHostJS}, false)
	t.Logf("the agent's own host: %s", a.Withheld([]byte(out)))
	if !strings.Contains(out, "second host: hung up") || (!strings.Contains(out, `instance\":\"string`) && !strings.Contains(out, `instance":"string`)) {
		t.Errorf("the host the agent connected from the extension's page, with the extension's instance, was not refused: %s", a.Withheld([]byte(out)))
	}
	ctx, cancel := context.WithTimeout(a.ctx, 20*time.Second)
	defer cancel()
	var es []fill.AuditEntry
	_ = poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		var err error
		es, err = audit.Open(a.stateDir).Recent(1000)
		return len(es) > audits, err
	})
	var newest fill.AuditEntry
	if len(es) > 0 {
		newest = es[len(es)-1]
	}
	if len(es) != audits+1 || newest.Event != fill.EventSecondConnection || newest.Status != fill.StatusRefused {
		t.Errorf("the audit log has %d new entries, the newest %+v; want one: the second connection, refused", len(es)-audits, newest)
	}
	hs, err := hostwait.Until(ctx, a.runDir, hostwait.One(hostwait.Connected))
	if err != nil || hs[0].PID != a.host.PID {
		t.Errorf("after the refused connection the extension's host %d does not serve alone, connected: %+v, %v", a.host.PID, hs, err)
	}
}

// leakScan scans, for every form of the key: every result and progress
// message of the three MCP servers and every file their workspaces hold,
// fillgate's log and audit log, and the keyring's other items and its
// index. (The rig's final scan adds every file under its root, the
// browser's output and everything fillgate printed.)
func (p *pkRig) leakScan(t *testing.T, m toolsMark) {
	t.Helper()
	kr := keychain.OS()
	listed, err := kr.List(p.a.ctx)
	if err != nil {
		t.Fatal(err)
	}
	own, _ := keychain.NewPasskeyItem(p.svc, "ada")
	var others [][]byte
	for _, l := range listed {
		if l.Item == own {
			continue
		}
		v, _ := kr.Get(p.a.ctx, l.Item)
		others = append(others, v)
	}
	for n := 0; ; n++ {
		v, err := keyring.Get(keychain.Service, "fillgate-index-"+strconv.Itoa(n))
		if err != nil {
			break
		}
		others = append(others, []byte(v))
	}
	if len(others) == 0 {
		t.Error("the keyring scan read nothing (no index)")
	}
	for _, s := range p.a.allSecrets() {
		p.tools.scan(t, s, m)
		p.a.scanFillgate(t, s)
		for _, v := range others {
			leakscan.Bytes(t, s, "another keyring item or the index", v)
		}
	}
}
