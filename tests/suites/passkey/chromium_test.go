//go:build linux

package passkey

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/desktop"
	"github.com/fillgate/fillgate/tests/kit/fgenv"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/hostwait"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/rp"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

// set is one Chromium with fillgate, a relying party and the person.
type set struct {
	t      testing.TB
	ctx    context.Context
	root   *fgenv.Root
	env    []string
	person *desktop.Person
	site   *rp.Server
	svc    string          // the site's service: localhost:PORT
	tab    context.Context // the site's tab, over the test's own CDP session
	worker context.Context // the extension's service worker, to see its arms
	runs   []*fgrun.Run
}

func start(t testing.TB) *set {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	root := fgenv.New(t, "fgpk-")
	display := desktop.Start(t)
	secretservice.Start(t)
	s := &set{t: t, ctx: ctx, root: root, person: display.Person(t)}
	s.env = append(append(root.Env, display.Env()...), "DBUS_SESSION_BUS_ADDRESS="+os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	s.site = rp.Start(t, rp.Options{})
	u, _ := url.Parse(s.site.URL)
	s.svc = "localhost:" + u.Port()
	s.policy("each")

	profile := filepath.Join(root.Dir, "profile")
	out, errOut, code := s.cli("install", "--json", "--browser", "chromium", "--user-data-dir", profile)
	var rep struct {
		ExtensionDir string `json:"extension_dir"`
	}
	if code != 0 || json.Unmarshal(out, &rep) != nil || rep.ExtensionDir == "" {
		t.Fatalf("fillgate install exited %d: %s%s", code, out, errOut)
	}
	c := browser.StartChromium(t, ctx, browser.ChromiumOptions{UserDataDir: profile, Extensions: []string{rep.ExtensionDir}, Env: s.env})
	bctx := c.Attach(t, ctx)
	if hs, err := hostwait.Until(ctx, root.RunDir, hostwait.One(hostwait.Connected)); err != nil {
		t.Fatalf("no host with the extension connected: %v; last status %+v", err, hs)
	}
	info, err := browser.WaitTarget(ctx, bctx, "service_worker", manifest.ExtensionOrigin)
	if err != nil {
		t.Fatal(err)
	}
	s.worker, _ = chromedp.NewContext(bctx, chromedp.WithTargetID(info.TargetID))
	s.tab = browser.NewTab(t, bctx, s.site.URL)
	// The person's own passkeys: a platform authenticator, which the
	// test adds over its own CDP session (never fillgate).
	rp.AddPersonsAuthenticator(t, s.tab)
	return s
}

// policy writes the policy: the site's approval mode.
func (s *set) policy(approval string) {
	s.policyText(fmt.Sprintf("rate_limit = \"1000/1m\"\nno_response_cooldown = \"0s\"\n\n[service.%q]\napproval = %q\n", s.svc, approval))
}

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

// run starts fillgate (the agent's request, or the person's add).
func (s *set) run(args ...string) *fgrun.Run {
	cmd := exec.CommandContext(s.ctx, fillgateBin, args...)
	cmd.Env = s.env
	r := fgrun.Start(s.t, cmd)
	s.runs = append(s.runs, r)
	return r
}

// approve waits for the native dialog and approves it: in
// pinentry-gtk-2's confirmation Cancel has the focus, then Approve.
func (s *set) approve(r *fgrun.Run) {
	s.t.Helper()
	ctx, cancel := r.Awaiting(s.ctx, 30*time.Second)
	defer cancel()
	if _, err := s.person.WaitDialog(ctx); err != nil {
		s.t.Fatalf("no native dialog: %v; fillgate printed %s%s", err, r.Stdout(), r.Stderr())
	}
	if err := s.person.Key(s.ctx, "Tab", "Return"); err != nil {
		s.t.Fatal(err)
	}
}

// armed waits until the extension holds an arm for the site's tab.
func (s *set) armed(r *fgrun.Run) {
	s.t.Helper()
	ctx, cancel := r.Awaiting(s.ctx, 30*time.Second)
	defer cancel()
	if err := poll.Until(ctx, 20*time.Millisecond, func() (bool, error) {
		return chromedp.Run(s.worker, chromedp.Evaluate[bool](`passkeyArms.size === 1`))
	}); err != nil {
		s.t.Fatalf("the tab was never armed: %v; fillgate printed %s%s", err, r.Stdout(), r.Stderr())
	}
}

// click presses the site's button and returns what the page then says.
func (s *set) click(button string) string {
	s.t.Helper()
	if _, err := chromedp.Run(s.tab, chromedp.Evaluate[bool](`document.getElementById("status").textContent = "", document.getElementById("`+button+`").click(), true`)); err != nil {
		s.t.Fatal(err)
	}
	var got string
	ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
	defer cancel()
	_ = poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		v, err := chromedp.Run(s.tab, chromedp.Evaluate[string](`document.getElementById("status").textContent`))
		got = v
		return v != "", err
	})
	return got
}

// enrol adds the agents' passkey for ada, as the person does: `fillgate
// passkey add`, approved in the dialog, then the site's own button.
func (s *set) enrol() {
	s.t.Helper()
	add := s.run("passkey", "add", "--service", s.svc, "--account", "ada", "--json")
	s.approve(add)
	s.armed(add)
	if got := s.click("add"); got != "passkey added" {
		s.t.Fatalf("add: the page says %q", got)
	}
	s.result(add, fill.StatusOK, "added a passkey for your agents")
}

// result waits for r's result.
func (s *set) result(r *fgrun.Run, want fill.Status, detail string) fill.Result {
	s.t.Helper()
	res, code, err := r.Result(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	if res.Status != want || code != want.ExitCode() || !strings.Contains(res.Detail, detail) || res.Field != fill.FieldPasskey {
		s.t.Fatalf("result %+v (exit %d); want %s with %q", res, code, want, detail)
	}
	if res.Status == fill.StatusOK && (res.Origin != s.site.URL || res.Via != fill.ViaExtension) {
		s.t.Fatalf("result %+v; want origin %s via the extension", res, s.site.URL)
	}
	return res
}

// TestChromiumPasskeys: the person adds a passkey for the agents
// (`fillgate passkey add`, approved in the native dialog), and the agent
// signs in with it under approval each (the dialog), lease (the dialog
// once, then a notice) and none (a notice); the site verifies every
// assertion and its count. A call in a tab nobody armed goes to the
// browser's own authenticator, which still answers, and an rpId the page
// may not claim is not answered. The private key is nowhere but in its
// keyring item.
func TestChromiumPasskeys(t *testing.T) {
	s := start(t)
	s.enrol()
	regs := s.site.Registrations()
	if len(regs) != 1 || regs[0].AttestationFormat != "none" || !regs[0].UserVerified || regs[0].User != "ada" {
		t.Fatalf("the site registered %+v", regs)
	}
	ours := regs[0].CredentialID

	signIn := func(t *testing.T, prompt bool, count uint32, uv bool) {
		t.Helper()
		r := s.run("fill", "--service", s.svc, "--field", "passkey", "--json")
		if prompt {
			s.approve(r)
		}
		s.armed(r)
		if got := s.click("signin"); got != "welcome ada" {
			t.Fatalf("sign-in: the page says %q", got)
		}
		s.result(r, fill.StatusOK, "answered the page's passkey sign-in")
		logins := s.site.Logins()
		last := logins[len(logins)-1]
		if !bytes.Equal(last.CredentialID, ours) || s.site.SignCount(ours) != count || last.UserVerified != uv {
			t.Fatalf("the site's last login %+v, count %d; want ours with count %d, UV %v", last, s.site.SignCount(ours), count, uv)
		}
	}
	t.Run("each", func(t *testing.T) { signIn(t, true, 1, true) })
	t.Run("lease", func(t *testing.T) {
		s.policy("lease")
		signIn(t, true, 2, true)
		signIn(t, false, 3, false) // the lease: a notice, no dialog, no UV
	})
	t.Run("none", func(t *testing.T) {
		s.policy("none")
		signIn(t, false, 4, false)
	})
	t.Run("not armed: the person's own passkey answers", func(t *testing.T) {
		if got := s.click("add"); got != "passkey added" {
			t.Fatalf("the browser's own create: the page says %q", got)
		}
		if got := s.click("signin"); got != "welcome ada" {
			t.Fatalf("the browser's own get: the page says %q", got)
		}
		logins := s.site.Logins()
		if last := logins[len(logins)-1]; bytes.Equal(last.CredentialID, ours) || s.site.SignCount(ours) != 4 {
			t.Fatalf("the site's last login %+v used the agents' passkey", last)
		}
	})
	t.Run("an rpId the page may not claim", func(t *testing.T) {
		r := s.run("fill", "--service", s.svc, "--field", "passkey", "--json")
		s.armed(r)
		_, _ = chromedp.Run(s.tab, chromedp.Evaluate[bool](`navigator.credentials.get({ publicKey: { challenge: new Uint8Array(32), rpId: "example.com" } })
			.then(() => { document.getElementById("status").textContent = "answered"; }, (e) => { document.getElementById("status").textContent = "error: " + e.name; }), true`))
		s.result(r, fill.StatusRefused, "may not claim")
		if s.site.SignCount(ours) != 4 {
			t.Fatal("the agents' passkey signed")
		}
	})

	// `fillgate saved` lists it; the lease covers it, with a notice.
	out, _, code := s.cli("saved", "--json")
	var saved struct {
		Items []keychain.Item `json:"items"`
	}
	if code != 0 || json.Unmarshal(out, &saved) != nil || len(saved.Items) != 1 ||
		saved.Items[0] != (keychain.Item{Service: s.svc, Field: keychain.FieldPasskey, Account: "ada"}) {
		t.Fatalf("fillgate saved --json printed %s (exit %d)", out, code)
	}

	s.leakScan(t)

	t.Run("forget", func(t *testing.T) {
		out, _, code := s.cli("forget", "--service", s.svc, "--field", "passkey")
		if code != 0 || !strings.Contains(string(out), "removed the agents' passkey for "+s.svc+" as ada") || !strings.Contains(string(out), "the site still lists") {
			t.Fatalf("fillgate forget printed %s (exit %d)", out, code)
		}
		s.policy("lease") // the lease granted above signs nothing once the passkey is gone
		r := s.run("fill", "--service", s.svc, "--field", "passkey", "--json")
		s.result(r, fill.StatusFailed, "no passkey of the agents' is kept for "+s.svc)
	})
}

// leakScan looks for the passkey's private key, in every form leakscan
// knows, in every output, file, log and keyring item but its own.
func (s *set) leakScan(t *testing.T) {
	t.Helper()
	// Leak scan: the private key, in every form leakscan knows, is in no
	// result, output, log, audit line or file, and in no keyring item but
	// its own.
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
	priv, err := x509.ParsePKCS8PrivateKey(kept.Key)
	if err != nil {
		t.Fatal(err)
	}
	scalar, _ := priv.(*ecdsa.PrivateKey).Bytes()
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
	clear(kept.Key)
}
