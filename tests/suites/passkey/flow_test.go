//go:build linux

package passkey

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/tests/kit/desktop"
	"github.com/fillgate/fillgate/tests/kit/fgenv"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/rp"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

// tab is the site's tab in the browser under test (Chromium or Firefox
// ESR, each with the extension from `fillgate install` and the host the
// browser started), as the test drives it.
type tab interface {
	// eval evaluates a JavaScript expression in the page's own world,
	// awaiting a promise, and returns its value as a string.
	eval(expr string) string
	// open loads url in the tab and waits for it to load.
	open(url string)
	// armed waits until the extension has armed the tab for r's one
	// call: the host's passkey_arm answered.
	armed(t testing.TB, r *fgrun.Run)
}

// set is one browser with fillgate, a relying party and the person.
type set struct {
	t      testing.TB
	ctx    context.Context
	root   *fgenv.Root
	env    []string
	person *desktop.Person
	site   *rp.Server
	origin string // the site's origin in the tab: site.URL, unless served another way
	svc    string // the site's service: localhost:PORT
	// driven is the site's driven setting in the policy: "" leaves the
	// person's default (clean-room), "in-page" lets fillgate use the
	// agents' passkey in a browser a program drives, approved each time.
	driven string
	tab    tab
	runs   []*fgrun.Run
}

// newSet starts all but the browser: the person's display with the
// native dialog, the Secret Service, the relying party and a policy of
// approval each for it, with the default driven setting (clean-room).
func newSet(t testing.TB, prefix string) *set {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	root := fgenv.New(t, prefix)
	display := desktop.Start(t)
	secretservice.Start(t)
	s := &set{t: t, ctx: ctx, root: root, person: display.Person(t)}
	s.env = append(append(root.Env, display.Env()...), "DBUS_SESSION_BUS_ADDRESS="+os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	s.site = rp.Start(t, rp.Options{})
	s.origin, s.svc = s.site.URL, serviceOf(t, s.site.URL)
	s.policy("each")
	return s
}

// serviceOf is the service of a loopback origin: localhost:PORT.
func serviceOf(t testing.TB, origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		t.Fatal(err)
	}
	return "localhost:" + u.Port()
}

// policy writes the policy: the site's approval mode, and its driven
// setting when s.driven names one.
func (s *set) policy(approval string) { s.policyFor(s.svc, approval) }

// policyFor writes the policy: service's approval mode, and its driven
// setting when s.driven names one.
func (s *set) policyFor(service, approval string) {
	driven := ""
	if s.driven != "" {
		driven = fmt.Sprintf("driven = %q\n", s.driven)
	}
	s.policyText(fmt.Sprintf("rate_limit = \"1000/1m\"\nno_response_cooldown = \"0s\"\n\n[service.%q]\napproval = %q\n%s", service, approval, driven))
}

// inPage is the driven setting that lets fillgate use the agents'
// passkey in a browser a program drives.
const inPage = "in-page"

// policyText writes the policy file.
func (s *set) policyText(text string) { fgenv.WritePolicy(s.t, s.env, text) }

// cli runs fillgate as the person, to its end.
func (s *set) cli(args ...string) (stdout, stderr []byte, code int) { return s.cliIn(nil, args...) }

// cliIn is cli with stdin.
func (s *set) cliIn(stdin []byte, args ...string) (stdout, stderr []byte, code int) {
	cmd := exec.CommandContext(s.ctx, fillgateBin, args...)
	cmd.Env = s.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	return fgrun.Command(s.t, cmd)
}

// install runs `fillgate install --json` with args and returns the
// directory it unpacked the extension to.
func (s *set) install(args ...string) string {
	s.t.Helper()
	out, errOut, code := s.cli(append([]string{"install", "--json"}, args...)...)
	var rep struct {
		ExtensionDir string `json:"extension_dir"`
	}
	if code != 0 || json.Unmarshal(out, &rep) != nil || rep.ExtensionDir == "" {
		s.t.Fatalf("fillgate install exited %d: %s%s", code, out, errOut)
	}
	return rep.ExtensionDir
}

// run starts fillgate (the agent's request, or the person's add); it
// is killed, when still running, at the end of t (a case that failed
// leaves no armed tab to the next).
func (s *set) run(t testing.TB, args ...string) *fgrun.Run {
	cmd := exec.CommandContext(s.ctx, fillgateBin, args...)
	cmd.Env = s.env
	r := fgrun.Start(t, cmd)
	s.runs = append(s.runs, r)
	return r
}

// signIn starts the agent's request for the site's passkey.
func (s *set) signIn(t testing.TB) *fgrun.Run {
	return s.run(t, "fill", "--service", s.svc, "--field", "passkey", "--json")
}

// press starts the agent's sign-in, approves it in the native dialog
// when prompt, waits for the tab's arm and presses the page's sign-in
// button: it returns the run and what the page then says.
func (s *set) press(t testing.TB, prompt bool) (*fgrun.Run, string) {
	t.Helper()
	r := s.signIn(t)
	if prompt {
		s.approve(t, r)
	}
	s.armed(t, r)
	return r, s.click("signin")
}

// approve waits for the native dialog and approves it: in
// pinentry-gtk-2's confirmation Cancel has the focus, then Approve.
func (s *set) approve(t testing.TB, r *fgrun.Run) {
	t.Helper()
	ctx, cancel := r.Awaiting(s.ctx, 30*time.Second)
	defer cancel()
	if _, err := s.person.WaitDialog(ctx); err != nil {
		t.Fatalf("no native dialog: %v; fillgate printed %s%s", err, r.Stdout(), r.Stderr())
	}
	if err := s.person.Key(s.ctx, "Tab", "Return"); err != nil {
		t.Fatal(err)
	}
}

// armed waits until the extension holds an arm for the site's tab.
func (s *set) armed(t testing.TB, r *fgrun.Run) {
	t.Helper()
	s.tab.armed(t, r)
}

// setUser puts name into the page's account field ("" for a
// discoverable sign-in).
func (s *set) setUser(name string) {
	s.t.Helper()
	s.tab.eval(`document.getElementById("user").value = ` + strconv.Quote(name))
}

// click presses the site's button and returns what the page then says.
func (s *set) click(button string) string {
	s.t.Helper()
	s.tab.eval(`document.getElementById("status").textContent = "", document.getElementById("second").textContent = "", document.getElementById("` + button + `").click(), true`)
	return s.await("status")
}

// await waits, at most 20 s, for the page's element id to say something,
// and returns it.
func (s *set) await(id string) string {
	s.t.Helper()
	var got string
	ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
	defer cancel()
	_ = poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		got = s.tab.eval(`document.getElementById("` + id + `").textContent`)
		return got != "", nil
	})
	return got
}

// enrol adds the agents' passkey for ada, as the person does: `fillgate
// passkey add`, approved in the dialog, then the site's own button.
func (s *set) enrol() {
	s.t.Helper()
	add := s.run(s.t, "passkey", "add", "--service", s.svc, "--account", "ada", "--json")
	s.approve(s.t, add)
	s.armed(s.t, add)
	if got := s.click("add"); got != "passkey added" {
		s.t.Fatalf("add: the page says %q", got)
	}
	s.result(s.t, add, fill.StatusOK, "added a passkey for your agents")
}

// result waits for r's result.
func (s *set) result(t testing.TB, r *fgrun.Run, want fill.Status, detail string) fill.Result {
	t.Helper()
	res, code, err := r.Result(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != want || code != want.ExitCode() || !strings.Contains(res.Detail, detail) || res.Field != fill.FieldPasskey {
		t.Fatalf("result %+v (exit %d); want %s with %q", res, code, want, detail)
	}
	if res.Status == fill.StatusOK && (res.Origin != s.origin || res.Via != fill.ViaExtension) {
		t.Fatalf("result %+v; want origin %s via the extension", res, s.origin)
	}
	return res
}

// lastLogin is the site's last login, with the count it keeps for
// credential id.
func (s *set) lastLogin(t *testing.T, id []byte) (rp.Login, uint32) {
	t.Helper()
	logins := s.site.Logins()
	if len(logins) == 0 {
		t.Fatal("the site let nobody in")
	}
	return logins[len(logins)-1], s.site.SignCount(id)
}

// doorRefusal is the message of the door's NotAllowedError, when
// fillgate refused the page's call (the browser's own say more).
const doorRefusal = "The operation either timed out or was not allowed."

// refusedByFillgate is what the page says when fillgate refused its call.
const refusedByFillgate = "error: " + doorRefusal

// byFillgate reports whether a call's outcome ("credential ID", or the
// error's name and message) is fillgate's: its passkey, or its refusal.
func byFillgate(outcome string, ours []byte) bool {
	return strings.Contains(outcome, base64.RawURLEncoding.EncodeToString(ours)) || outcome == "NotAllowedError: "+doorRefusal
}

// refusedWhileDriven is the detail's end of a passkey request refused
// because a program drives the browser: the fix, and its limits.
func refusedWhileDriven(svc string) string {
	return `set driven = "in-page" for ` + svc + ` in your policy, and approve each use in the dialog (never under a lease or approval = "none")`
}

// refused checks that r was refused because a program drives the browser
// and the policy leaves the site at the default (clean-room): at once,
// naming the fix, with no native dialog shown.
func (s *set) refused(t testing.TB, r *fgrun.Run) {
	t.Helper()
	s.result(t, r, fill.StatusRefused, refusedWhileDriven(s.svc))
	if s.person.Visible(s.ctx, "^[Pp]inentry") {
		t.Error("a native dialog is open after the refusal")
	}
}

// passkeys runs what every browser the test drives must do (Chromium
// over the test's own CDP session, Firefox ESR over WebDriver BiDi:
// fillgate finds both drivable, and a program driving the browser could
// make an armed tab's call itself). Under the person's default (driven =
// "clean-room"), adding a passkey for the agents is refused before
// anything is asked, and the refusal names the fix. With driven =
// "in-page" for the site, the person adds one (`fillgate passkey add`,
// approved in the native dialog) and the agent signs in with it,
// approved in the dialog each time: under approval each, and under lease
// and none too, which never spare the person the dialog in a driven
// browser. Back under the default, a sign-in with the kept passkey is
// refused under each, lease and none alike, before any dialog. The site
// verifies every assertion and its count. It returns the passkey's
// credential id, the policy left at driven = "in-page", approval each.
// (Lease and none, where nothing drives the browser:
// TestUndrivenPasskeys.)
func passkeys(t *testing.T, s *set) []byte {
	t.Run("refused by default", func(t *testing.T) {
		s.refused(t, s.run(t, "passkey", "add", "--service", s.svc, "--account", "ada", "--json"))
		if regs := s.site.Registrations(); len(regs) != 0 {
			t.Fatalf("the site registered %+v", regs)
		}
	})
	s.driven = inPage
	s.policy("each")
	s.enrol()
	regs := s.site.Registrations()
	if len(regs) != 1 || regs[0].AttestationFormat != "none" || !regs[0].UserVerified || regs[0].User != "ada" {
		t.Fatalf("the site registered %+v", regs)
	}
	ours := regs[0].CredentialID

	// Every sign-in is approved in the dialog, so each is user-verified.
	signIn := func(t *testing.T) {
		t.Helper()
		count := s.site.SignCount(ours) + 1
		r, got := s.press(t, true)
		if got != "welcome ada" {
			t.Fatalf("sign-in: the page says %q", got)
		}
		s.result(t, r, fill.StatusOK, "answered the page's passkey sign-in on "+s.origin+" with the agents' passkey, approved in the prompt")
		last, n := s.lastLogin(t, ours)
		if !bytes.Equal(last.CredentialID, ours) || n != count || !last.UserVerified || last.Discoverable {
			t.Fatalf("the site's last login %+v, count %d; want ours named in allowCredentials with count %d, UV", last, n, count)
		}
	}
	t.Run("each", func(t *testing.T) { signIn(t) })
	t.Run("lease: the dialog each time", func(t *testing.T) {
		s.policy("lease")
		signIn(t)
		signIn(t) // no lease in a driven browser: the dialog again
	})
	t.Run("none: the dialog each time", func(t *testing.T) {
		s.policy("none")
		signIn(t)
	})
	if n := s.site.SignCount(ours); n != 4 {
		t.Errorf("the site counts %d for the agents' passkey after four sign-ins", n)
	}
	t.Run("refused by default, whatever the approval", func(t *testing.T) {
		s.driven = ""
		defer func() { s.driven = inPage; s.policy("each") }()
		count := s.site.SignCount(ours)
		for _, approval := range []string{"each", "lease", "none"} {
			s.policy(approval)
			s.refused(t, s.signIn(t))
		}
		if n := s.site.SignCount(ours); n != count {
			t.Fatalf("the site counts %d for the agents' passkey after the refusals; want %d", n, count)
		}
	})
	s.policy("each")
	return ours
}

// discoverable: a sign-in that names no account (get() with an empty
// allowCredentials, the site's discoverable login) is answered with the
// agents' passkey, approved in the dialog, and the site finds ada by its
// user handle.
func discoverable(t *testing.T, s *set, ours []byte) {
	count := s.site.SignCount(ours)
	s.policy("each")
	s.setUser("")
	defer s.setUser("ada")
	r, got := s.press(t, true)
	if got != "welcome ada" {
		t.Fatalf("discoverable sign-in: the page says %q", got)
	}
	s.result(t, r, fill.StatusOK, "answered the page's passkey sign-in")
	last, n := s.lastLogin(t, ours)
	if !last.Discoverable || !bytes.Equal(last.CredentialID, ours) || last.User != "ada" || n != count+1 {
		t.Fatalf("the site's last login %+v, count %d; want ada's discoverable login with ours at %d", last, n, count+1)
	}
}

// uvRequired: with userVerification "required" (the site's ?uv=), the
// agents' passkey answers after the person approved this very use in the
// native dialog (the UV flag set, which the site then requires), as
// every use in a browser a program drives is. (Under a lease or approval
// none, where fillgate refuses such a call: TestUndrivenPasskeys.)
func uvRequired(t *testing.T, s *set, ours []byte) {
	count := s.site.SignCount(ours)
	s.tab.open(s.site.URL + "/?uv=required")
	defer s.tab.open(s.site.URL)
	s.policy("each")
	r, got := s.press(t, true)
	if got != "welcome ada" {
		t.Fatalf("UV required, approved in the dialog: the page says %q", got)
	}
	s.result(t, r, fill.StatusOK, "approved in the prompt")
	last, n := s.lastLogin(t, ours)
	if !bytes.Equal(last.CredentialID, ours) || !last.UVRequired || !last.UserVerified || n != count+1 {
		t.Fatalf("the site's last login %+v, count %d; want ours, verified under UV required, at %d", last, n, count+1)
	}
}

// twice: a page that calls get() twice at once under one arm gets
// fillgate's answer for the first call only; the second is the
// browser's own (wantSecond says what that gave). Approved in the
// dialog.
func twice(t *testing.T, s *set, ours []byte, wantSecond func(string) bool) {
	count := s.site.SignCount(ours)
	s.policy("each")
	s.tab.open(s.site.URL + "/?calls=2")
	defer s.tab.open(s.site.URL)
	r, got := s.press(t, true)
	if got != "welcome ada" {
		t.Fatalf("two calls: the page says %q after the first", got)
	}
	s.result(t, r, fill.StatusOK, "answered the page's passkey sign-in")
	second := s.await("second")
	if byFillgate(second, ours) || !wantSecond(second) {
		t.Fatalf("the second call got %q", second)
	}
	if last, n := s.lastLogin(t, ours); !bytes.Equal(last.CredentialID, ours) || n != count+1 {
		t.Fatalf("the site's last login %+v, count %d; want ours at %d", last, n, count+1)
	}
}

// crossOriginFrame: while the tab is armed, a frame of another origin
// (the site's mirror, which may claim the relying party id) calls get():
// fillgate does not answer it (the door runs in the top frame only), the
// browser's own WebAuthn does (wantFramed says what it gave), and the
// arm is still there for the top page's own call, which fillgate
// answers. Approved in the dialog.
func crossOriginFrame(t *testing.T, s *set, mirror string, ours []byte, wantFramed func(string) bool) {
	count := s.site.SignCount(ours)
	s.policy("each")
	s.tab.open(s.site.URL)
	r := s.signIn(t)
	s.approve(t, r)
	s.armed(t, r)
	s.tab.eval(`(() => { const f = document.createElement("iframe"); f.allow = "publickey-credentials-get *"; f.src = ` +
		strconv.Quote(mirror+"/frame") + `; f.onload = () => f.contentWindow.postMessage("get", "*"); document.body.append(f); return true; })()`)
	framed := s.await("framed")
	if byFillgate(framed, ours) || !wantFramed(framed) {
		t.Fatalf("the frame's call got %q", framed)
	}
	if got := s.click("signin"); got != "welcome ada" {
		t.Fatalf("the top page's call after the frame's: the page says %q", got)
	}
	s.result(t, r, fill.StatusOK, "answered the page's passkey sign-in")
	// The passkey signed once: a signature for the frame too would have
	// left the count the site gets one further.
	if last, n := s.lastLogin(t, ours); !bytes.Equal(last.CredentialID, ours) || n != count+1 {
		t.Fatalf("the site's last login %+v, count %d; want ours at %d", last, n, count+1)
	}
}

// leakScan looks for the passkey's private key, in every form leakscan
// knows, in every output, file, log and keyring item but its own.
func (s *set) leakScan(t *testing.T) {
	t.Helper()
	it, err := keychain.NewPasskeyItem(s.svc, "ada")
	if err != nil {
		t.Fatal(err)
	}
	kr := keychain.OS()
	raw, err := kr.Get(s.ctx, it)
	defer clear(raw)
	if err != nil {
		t.Fatalf("the passkey is not in the keyring: %v", err)
	}
	var kept struct{ Key []byte }
	if err := json.Unmarshal(raw, &kept); err != nil || len(kept.Key) == 0 {
		t.Fatalf("the keyring item holds no key: %v", err)
	}
	defer clear(kept.Key)
	priv, err := x509.ParsePKCS8PrivateKey(kept.Key)
	if err != nil {
		t.Fatal("the keyring item's key does not parse")
	}
	scalar, _ := priv.(*ecdsa.PrivateKey).Bytes()
	defer clear(scalar)
	for _, key := range [][]byte{kept.Key, scalar} {
		for i, r := range s.runs {
			leakscan.Bytes(t, key, fmt.Sprintf("run %d's output", i), append(r.Stdout(), r.Stderr()...))
		}
		if n := leakscan.Dirs(t, key, s.root.Dir); n == 0 {
			t.Error("the leak scan read no file")
		}
		listed, err := kr.List(s.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range listed {
			if l.Item == it {
				continue
			}
			v, _ := kr.Get(s.ctx, l.Item)
			leakscan.Bytes(t, key, "another keyring item", v)
		}
		for n := 0; ; n++ {
			v, err := keyringIndex(n)
			if err != nil {
				break
			}
			leakscan.Bytes(t, key, "the keyring's index", v)
		}
	}
}
