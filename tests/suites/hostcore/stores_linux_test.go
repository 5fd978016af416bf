package hostcore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/secrets/bitwarden"
	"github.com/fillgate/fillgate/internal/secrets/onepassword"
	"github.com/fillgate/fillgate/internal/secrets/rbw"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/fakes/standins"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/stores"
)

// storePolicy is a policy whose github.com password comes from a store.
func storePolicy(table string) string {
	return "[service.\"github.com\".password]\n" + table
}

// expectNoStoreNames checks that a result names the store but none of
// what the policy says about the entry.
func expectNoStoreNames(t *testing.T, got run, names ...string) {
	t.Helper()
	for _, n := range names {
		if strings.Contains(got.res.Detail, n) {
			t.Errorf("the result names %q: %s", n, got.res.Detail)
		}
	}
}

// TestPassThroughTheHost: the real pass, with a GnuPG key the test made;
// the prompt says where the value comes from, the approved value is the
// entry's first line, and a missing entry fails without naming it.
func TestPassThroughTheHost(t *testing.T) {
	s := stores.NewPass(t, "")
	r := newRig(t, setup{browser: undriven, page: loginPage("https://github.com"), env: map[string]string{"GNUPGHOME": s.GnuPG},
		policy: storePolicy(fmt.Sprintf("source = \"pass\"\nentry = \"work/github\"\nstore_dir = %q\n", s.Dir))})
	s.Insert(t, "work/github", append(append([]byte(nil), r.secret...), "\nuser: alice\n"...))
	r.behave(namesNoEntry(approvesFrom("from pass", "", nil, fakehuman.ApproveOptions{}), "work/github", s.Dir))
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "the value came from pass, approved in the prompt")
	r.expectInserted(r.secret)
	expectNoStoreNames(t, got, "work/github", s.Dir)

	r.writePolicy(storePolicy(fmt.Sprintf("source = \"pass\"\nentry = \"work/gitlab\"\nstore_dir = %q\n", s.Dir)))
	r.behave(namesNoEntry(approvesFrom("from pass", "", nil, fakehuman.ApproveOptions{}), "work/gitlab", s.Dir))
	got = r.fill("github.com")
	r.expect(got, fill.StatusFailed, "the value could not be read from pass: there is no entry ENTRY")
	expectNoStoreNames(t, got, "work/gitlab", s.Dir)
	if r.ext.Inserts() != 1 {
		t.Errorf("%d inserts", r.ext.Inserts())
	}
	for _, sec := range r.allSecrets() {
		leakscan.Dirs(t, sec, s.Root) // the store's own files: encrypted
	}
}

// TestKeePassXCThroughTheHost: the real keepassxc-cli with a database the
// test made; the person types the database password in the prompt (sealed
// like any answer), it reaches keepassxc-cli on its stdin, and the entry's
// password is inserted. A wrong database password fails, nothing typed.
func TestKeePassXCThroughTheHost(t *testing.T) {
	r := newRig(t, setup{browser: undriven, page: loginPage("https://github.com")})
	dbPassword := r.newSecret()
	d := stores.NewKeePassDB(t, dbPassword, false, stores.KeePassEntry("grhLenZhS8ORIoDso+GMOA==", "github", "alice", r.secret, ""))
	r.writePolicy(storePolicy(fmt.Sprintf("source = \"keepassxc\"\ndatabase = %q\nentry = \"work/github\"\n", d.Path)))
	from := "from KeePassXC"
	r.behave(namesNoEntry(atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		if o := p.Offers(); o.From != from || o.Ask != "The password of the KeePassXC database" || o.Remember {
			return fmt.Errorf("the prompt offers %+v", o)
		}
		return p.Approve(ctx, fakehuman.ApproveOptions{Ask: dbPassword})
	}), "work/github", d.Path))
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "the value came from KeePassXC, approved in the prompt")
	r.expectInserted(r.secret)
	expectNoStoreNames(t, got, "work/github", d.Path)

	wrong := r.newSecret()
	r.behave(approvesFrom(from, "", nil, fakehuman.ApproveOptions{Ask: wrong}))
	got = r.fill("github.com")
	r.expect(got, fill.StatusFailed, "the value could not be read from KeePassXC: the database did not open")
	expectNoStoreNames(t, got, d.Path)
	if r.ext.Inserts() != 1 {
		t.Errorf("%d inserts", r.ext.Inserts())
	}
}

// TestStandInStores: 1Password's op, Bitwarden's bw and rbw cannot run
// here; their stand-ins answer as the real programs document. One approved
// fill each: the store gets the policy's fixed arguments and only its own
// variables, and the value it prints is what is inserted.
func TestStandInStores(t *testing.T) {
	d := standins.Install(t, "op", "bw", "rbw")
	for _, c := range []struct {
		store, table, from string
		args               []string
	}{
		{"1Password", "source = \"op\"\nref = \"op://Private/GitHub/password\"\ncommand = %q\n", "from 1Password: op://Private/GitHub/password",
			[]string{"read", "--no-newline", "op://Private/GitHub/password"}},
		{"Bitwarden", "source = \"bw\"\nitem = \"0f6c1a52-3c9e-4a8e-9f3b-1b2f7c0a9d11\"\ncommand = %q\n", "from Bitwarden: item 0f6c1a52-3c9e-4a8e-9f3b-1b2f7c0a9d11",
			[]string{"get", "password", "0f6c1a52-3c9e-4a8e-9f3b-1b2f7c0a9d11"}},
		{"rbw", "source = \"rbw\"\nentry = \"github.com\"\nuser = \"alice\"\ncommand = %q\n", "from rbw: github.com (alice)",
			[]string{"get", "github.com", "alice"}},
	} {
		t.Run(c.store, func(t *testing.T) {
			prog := map[string]string{"1Password": "op", "Bitwarden": "bw", "rbw": "rbw"}[c.store]
			r := newRig(t, setup{browser: undriven, page: loginPage("https://github.com"), policy: storePolicy(fmt.Sprintf(c.table, d.Program(prog)))})
			r.behave(atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
				if o := p.Offers(); o.From != strings.SplitN(c.from, ":", 2)[0] {
					return fmt.Errorf("the prompt offers %+v; want a value %s, by kind only", o, strings.SplitN(c.from, ":", 2)[0])
				}
				if entry := strings.SplitN(c.from, ": ", 2)[1]; strings.Contains(p.HTML(), entry) {
					return fmt.Errorf("the prompt page names the store's entry %q", entry)
				}
				return p.Approve(ctx, fakehuman.ApproveOptions{})
			}))
			agent := r.startFill("github.com")
			run := d.Next()
			if !slices.Equal(run.Args, c.args) {
				t.Errorf("%s ran with %q, want %q", prog, run.Args, c.args)
			}
			allowed := map[string][]string{"op": onepassword.EnvKeys, "bw": bitwarden.EnvKeys, "rbw": rbw.EnvKeys}[prog]
			for _, name := range run.EnvNames() {
				if !slices.Contains(allowed, name) && name != "LC_MESSAGES" && !(prog == "op" && strings.HasPrefix(name, "OP_")) &&
					!(prog == "bw" && name == "BW_NOINTERACTION") {
					t.Errorf("%s got %s, which is not one of its variables", prog, name)
				}
			}
			leakscan.Bytes(t, r.secret, prog+"'s command line", run.Cmdline())
			leakscan.Bytes(t, r.secret, prog+"'s environment", run.Environ())
			out := append([]byte(nil), r.secret...)
			if prog != "op" {
				out = append(out, '\n')
			}
			run.Answer(0, false, out)
			clear(out)
			got := agent.wait()
			r.expect(got, fill.StatusOK, "the value came from "+c.store+", approved in the prompt")
			r.expectInserted(r.secret)
		})
	}
}

// namesNoEntry is h, checking after it that the prompt page, as it was
// loaded, names the store by its kind only: none of names (entries,
// items, databases, paths) is anywhere in the page, which a program
// driving the browser could read.
func namesNoEntry(h human, names ...string) human {
	return func(ctx context.Context, r *rig, at prompted) error {
		err := h(ctx, r, at)
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, o := range r.outputs {
			if !strings.HasPrefix(o.name, "prompt page") {
				continue
			}
			for _, n := range names {
				if strings.Contains(string(o.data), n) {
					return fmt.Errorf("the %s names the store's %q", o.name, n)
				}
			}
		}
		return err
	}
}
