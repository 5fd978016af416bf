package hostcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

// keyring is a real Secret Service (gnome-keyring on a private session
// bus) for one test, and the variables that point fillgate at it.
type keyring struct {
	ss  *secretservice.Service
	env map[string]string
}

func startKeyring(t *testing.T) *keyring {
	t.Helper()
	ss := secretservice.Start(t)
	return &keyring{ss: ss, env: map[string]string{"DBUS_SESSION_BUS_ADDRESS": os.Getenv("DBUS_SESSION_BUS_ADDRESS")}}
}

// lock locks the login keyring, as a screen locker does.
func (k *keyring) lock() error {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return fmt.Errorf("lock the keyring: %w", err)
	}
	defer conn.Close()
	var locked []dbus.ObjectPath
	var prompt dbus.ObjectPath
	err = conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").
		Call("org.freedesktop.Secret.Service.Lock", 0, []dbus.ObjectPath{"/org/freedesktop/secrets/collection/login"}).Store(&locked, &prompt)
	if err != nil || len(locked) != 1 {
		return fmt.Errorf("lock the keyring: %v (locked %v)", err, locked)
	}
	return nil
}

// lookup reads an item's value with the Secret Service's own client.
func (k *keyring) lookup(t *testing.T, user string) ([]byte, bool) {
	t.Helper()
	out, err := exec.Command("secret-tool", "lookup", "service", "fillgate", "username", user).Output()
	return out, err == nil
}

// scan checks that the scenario's secrets are only encrypted in the
// keyring daemon's files.
func (k *keyring) scan(t *testing.T, r *rig) {
	t.Helper()
	for _, s := range r.allSecrets() {
		if n := leakscan.Dirs(t, s, k.ss.Data); n == 0 {
			t.Error("leak scan: no file of the keyring daemon was read")
		}
	}
}

// cli runs the fillgate binary with args (and stdin) as the person would,
// and returns what it printed and its exit code.
func (r *rig) cli(stdin []byte, args ...string) ([]byte, int) {
	r.t.Helper()
	cmd := exec.Command(fillgateBin(), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	p := r.start("fillgate "+args[0], cmd, r.dirs.environ())
	return p.finish()
}

// remember stores value for service (and account) with `fillgate
// remember --stdin`.
func (r *rig) remember(service, account string, value []byte) {
	r.t.Helper()
	args := []string{"remember", "--service", service, "--stdin"}
	if account != "" {
		args = append(args, "--account", account)
	}
	if out, code := r.cli(value, args...); code != 0 {
		r.t.Fatalf("fillgate remember: exit %d: %s", code, r.safe(string(out)))
	}
}

// saved runs `fillgate saved --json`.
func (r *rig) saved() (items []map[string]string, leases []map[string]any) {
	r.t.Helper()
	out, code := r.cli(nil, "saved", "--json")
	var list struct {
		Items  []map[string]string `json:"items"`
		Leases []map[string]any    `json:"leases"`
	}
	if code != 0 || json.Unmarshal(out, &list) != nil {
		r.t.Fatalf("fillgate saved --json: exit %d, %s", code, r.safe(string(out)))
	}
	return list.Items, list.Leases
}

// offers checks what the prompt the human has open offers.
func offers(p *fakehuman.Page, from, as string, accounts ...string) error {
	o := p.Offers()
	if o.From != from || o.As != as || !slices.Equal(o.Accounts, accounts) {
		return fmt.Errorf("the prompt offers %+v; want from %q as %q, accounts %v", o, from, as, accounts)
	}
	return nil
}

// approvesFrom checks that the prompt offers the saved value from from
// (as the account as, with accounts to pick) and approves it with o.
func approvesFrom(from, as string, accounts []string, o fakehuman.ApproveOptions) human {
	return atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		if err := offers(p, from, as, accounts...); err != nil {
			return err
		}
		if err := p.Approve(ctx, o); err != nil {
			return err
		}
		return shows(p, "Approved.")
	})
}

// remembers types value, ticks Remember and presses Enter; the prompt must
// offer no saved value.
func remembers(value []byte) human {
	return atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		if o := p.Offers(); o.From != "" || !o.Remember {
			return fmt.Errorf("the prompt offers %+v; want no saved value and the Remember box", o)
		}
		return p.SubmitWith(ctx, value, fakehuman.SubmitOptions{Remember: true})
	})
}

const fromKeyring = "from the OS keyring"

// The saved-value scenarios run in the person's own browser (undriven):
// in a browser a program drives, a saved value never goes into the page
// (TestDrivenInPageAsksToType).

// TestRememberAndApprove: a value typed in the prompt with Remember ticked
// is in the keyring after the fill (secret-tool reads it, `fillgate saved`
// lists it); the next fill offers it for one click and inserts it, for the
// account the page shows.
func TestRememberAndApprove(t *testing.T) {
	k := startKeyring(t)
	page := loginPage("https://github.com")
	page.Account = "alice@example.com"
	r := newRig(t, setup{browser: undriven, page: page, env: k.env})
	r.behave(remembers(r.secret))
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "; it was remembered in the OS keyring, as the person asked")
	if v, ok := k.lookup(t, "password github.com alice@example.com"); !ok || !bytes.Equal(v, r.secret) {
		t.Fatal("secret-tool: the remembered password differed (or is missing)")
	}
	if items, _ := r.saved(); len(items) != 1 || items[0]["service"] != "github.com" || items[0]["account"] != "alice@example.com" {
		t.Errorf("fillgate saved lists %v", items)
	}
	if strings.Contains(got.res.Detail, "alice") {
		t.Errorf("the result names the account: %s", got.res.Detail)
	}

	r.behave(approvesFrom(fromKeyring+", as alice@example.com", "alice@example.com", nil, fakehuman.ApproveOptions{}))
	got = r.fill("github.com")
	r.expect(got, fill.StatusOK, "the value came from the OS keyring, approved in the prompt")
	if r.ext.Inserts() != 2 || !r.ext.ValueEquals(r.secret) {
		t.Error("the approved value is not the remembered one: value differed")
	}
	r.expectAudit(got)
	if hows := auditHows(r); !slices.Equal(hows, []string{fill.HowTyped, fill.HowApproved}) {
		t.Errorf("the audit log says %v", hows)
	}
	for _, e := range r.auditEntries() {
		if b, _ := json.Marshal(e); bytes.Contains(b, []byte("alice")) {
			t.Error("the audit log names the account")
		}
	}
	k.scan(t, r)
}

func auditHows(r *rig) []string {
	var hows []string
	for _, e := range r.auditEntries() {
		hows = append(hows, e.How)
	}
	return hows
}

// TestLease: under approval = "lease", one approval lets the same agent
// fill again with a browser notification and no prompt; `fillgate saved`
// lists the lease; ending it in the popup makes the next fill ask again.
func TestLease(t *testing.T) {
	k := startKeyring(t)
	r := newRig(t, setup{browser: undriven, page: loginPage("https://github.com"), env: k.env,
		policy: "[service.\"github.com\"]\napproval = \"lease\"\nlease = \"10m\"\n"})
	r.remember("github.com", "", r.secret)
	r.behave(approvesFrom(fromKeyring, "", nil, fakehuman.ApproveOptions{}))
	r.expect(r.fill("github.com"), fill.StatusOK, "without a prompt until")
	if r.promptCount() != 1 || len(r.ext.Notices()) != 0 {
		t.Fatalf("%d prompts, %d notices after the first fill", r.promptCount(), len(r.ext.Notices()))
	}
	r.behave(func(context.Context, *rig, prompted) error { return errors.New("a prompt opened under the lease") })
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "the value came from the OS keyring, under a lease, with a notice and no prompt")
	if r.promptCount() != 1 || r.ext.Inserts() != 2 || !r.ext.ValueEquals(r.secret) {
		t.Fatalf("%d prompts, %d inserts; value matched %v", r.promptCount(), r.ext.Inserts(), r.ext.ValueEquals(r.secret))
	}
	notices := r.ext.Notices()
	if len(notices) != 1 {
		t.Fatalf("%d notices", len(notices))
	}
	for _, want := range []string{"github.com", "https://github.com", "(pid ", "via fillgate fill", fromKeyring} {
		if !strings.Contains(notices[0].Title+" "+notices[0].Message, want) {
			t.Errorf("the notice %+v does not say %q", notices[0], want)
		}
	}
	_, leases := r.saved()
	if len(leases) != 1 || leases[0]["service"] != "github.com" || leases[0]["via"] != "extension" || !strings.Contains(fmt.Sprint(leases[0]["agent"]), "via fillgate fill") {
		t.Fatalf("fillgate saved lists the leases %v", leases)
	}
	popup := r.ext.Leases()
	if len(popup) != 1 {
		t.Fatalf("the popup lists %+v", popup)
	}
	r.ext.EndLease(popup[0].ID)
	if _, err := r.ext.Wait(r.ctx, func(m fakeext.Message) bool { return m.Type == "leases" && len(r.ext.Leases()) == 0 }); err != nil {
		t.Fatal(err)
	}
	r.behave(approvesFrom(fromKeyring, "", nil, fakehuman.ApproveOptions{}))
	r.expect(r.fill("github.com"), fill.StatusOK, "approved in the prompt")
	if r.promptCount() != 2 {
		t.Errorf("after the lease ended: %d prompts", r.promptCount())
	}
	if hows := auditHows(r); !slices.Equal(hows, []string{fill.HowApproved, fill.HowLease, fill.HowApproved}) {
		t.Errorf("the audit log says %v", hows)
	}
	k.scan(t, r)
}

// TestApprovalNone: a remembered value fills with a notice and no prompt;
// with nothing remembered the fill fails with the fix; a notice the
// browser cannot show makes fillgate ask instead.
func TestApprovalNone(t *testing.T) {
	k := startKeyring(t)
	r := newRig(t, setup{browser: undriven, page: loginPage("https://github.com"), env: k.env,
		policy: "[service.\"github.com\"]\napproval = \"none\"\n"})
	got := r.fill("github.com")
	r.expect(got, fill.StatusFailed, "no saved value is there to fill: nothing is remembered for github.com in the OS keyring; remember it with `fillgate remember --service github.com`")
	r.expectNothingInserted()
	r.remember("github.com", "", r.secret)
	r.behave(func(context.Context, *rig, prompted) error { return errors.New("a prompt opened with approval none") })
	got = r.fill("github.com")
	r.expect(got, fill.StatusOK, "with a notice and no prompt (approval = none)")
	if r.promptCount() != 0 || len(r.ext.Notices()) != 1 || !r.ext.ValueEquals(r.secret) {
		t.Fatalf("%d prompts, %d notices; value matched %v", r.promptCount(), len(r.ext.Notices()), r.ext.ValueEquals(r.secret))
	}
	r.ext.FailNotices(true)
	r.behave(approvesFrom(fromKeyring, "", nil, fakehuman.ApproveOptions{}))
	r.expect(r.fill("github.com"), fill.StatusOK, "approved in the prompt")
	if r.promptCount() != 1 {
		t.Errorf("without a notice: %d prompts", r.promptCount())
	}
	r.expectExtSaw(3, "inspect", "outcome", "inspect", "notify", "insert", "outcome",
		"inspect", "notify", "open_prompt", "close_prompt", "insert", "outcome")
	k.scan(t, r)
}

// TestSeveralAccounts: with values for two accounts and none on the page,
// the person picks one in the prompt; with the account on the page, its
// value is offered.
func TestSeveralAccounts(t *testing.T) {
	k := startKeyring(t)
	r := newRig(t, setup{browser: undriven, page: loginPage("https://github.com"), env: k.env})
	bob := r.newSecret()
	r.remember("github.com", "alice@example.com", r.secret)
	r.remember("github.com", "bob", bob)
	r.behave(approvesFrom(fromKeyring, "", []string{"alice@example.com", "bob"}, fakehuman.ApproveOptions{Account: "bob"}))
	r.expect(r.fill("github.com"), fill.StatusOK, "approved in the prompt")
	if !r.ext.ValueEquals(bob) {
		t.Error("the value of the account picked was not inserted: value differed")
	}
	r.ext.Update(func(p *fakeext.Page) { p.Account = "alice@example.com" })
	r.behave(approvesFrom(fromKeyring+", as alice@example.com", "alice@example.com", nil, fakehuman.ApproveOptions{}))
	r.expect(r.fill("github.com"), fill.StatusOK, "approved in the prompt")
	if !r.ext.ValueEquals(r.secret) {
		t.Error("the page's account's value was not inserted: value differed")
	}
	k.scan(t, r)
}

// TestKeyringLockedMidFill: the keyring locks while the prompt is open
// (a screen locker): the approved fill fails with the unlock step, and
// nothing is typed.
func TestKeyringLockedMidFill(t *testing.T) {
	k := startKeyring(t)
	r := newRig(t, setup{browser: undriven, page: loginPage("https://github.com"), env: k.env})
	r.remember("github.com", "", r.secret)
	r.behave(atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		if err := offers(p, fromKeyring, ""); err != nil {
			return err
		}
		if err := k.lock(); err != nil {
			return err
		}
		return p.Approve(ctx, fakehuman.ApproveOptions{})
	}))
	got := r.fill("github.com")
	r.expect(got, fill.StatusFailed, "the value could not be read from the OS keyring: the OS keyring is locked; unlock it")
	r.expectNothingInserted()
	if got.res.Submitted != nil {
		t.Error("a failed fill says whether it submitted")
	}
	// Locked before the fill: nothing is offered, the person types.
	r.behave(answers(r.secret))
	r.expect(r.fill("github.com"), fill.StatusOK, "inserted")
	if r.lastPage().Offers().From != "" {
		t.Error("a locked keyring's value was offered")
	}
	k.scan(t, r)
}

// TestDrivenInPageAsksToType: in a browser a program drives, where the
// person lets fillgate type into the page (driven = "in-page"), a saved
// value never goes into it, whatever the policy grants it: under
// approval = "lease", approval = "none" and the default alike the person
// is asked, the prompt offers nothing saved and warns that the program
// driving the browser can read what is typed (rig.promptNote), and what
// goes into the page is what the person typed. No notice is shown, and no
// lease starts: the next fill asks again.
func TestDrivenInPageAsksToType(t *testing.T) {
	for _, c := range []struct{ name, table string }{
		{"lease", "approval = \"lease\"\nlease = \"10m\"\n"},
		{"none", "approval = \"none\"\n"},
		{"each", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := startKeyring(t)
			r := newRig(t, setup{page: loginPage("https://github.com"), env: k.env, policy: "[service.\"github.com\"]\n" + c.table})
			saved := r.newSecret()
			r.remember("github.com", "", saved)
			types := atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
				if err := offers(p, "", ""); err != nil {
					return err
				}
				return submitOn(ctx, p, r.secret)
			})
			for i := 1; i <= 2; i++ {
				r.behave(types)
				got := r.fill("github.com")
				r.expect(got, fill.StatusOK, "inserted into the focused password field")
				if strings.Contains(got.res.Detail, "the value came from") {
					t.Errorf("fill %d says a saved value was used: %s", i, got.res.Detail)
				}
				if r.promptCount() != i || r.ext.Inserts() != i || !r.ext.ValueEquals(r.secret) || r.ext.ValueEquals(saved) {
					t.Fatalf("fill %d: %d prompts, %d inserts; the typed value matched %v", i, r.promptCount(), r.ext.Inserts(), r.ext.ValueEquals(r.secret))
				}
			}
			if n := len(r.ext.Notices()); n != 0 {
				t.Errorf("%d notices", n)
			}
			if _, leases := r.saved(); len(leases) != 0 {
				t.Errorf("fillgate saved lists the leases %v", leases)
			}
			if hows := auditHows(r); !slices.Equal(hows, []string{fill.HowTyped, fill.HowTyped}) {
				t.Errorf("the audit log says %v", hows)
			}
			k.scan(t, r)
		})
	}
}
