package keychain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// secretTool runs the Secret Service's own command-line client, secret-tool
// (libsecret-tools), and returns its stdout and stderr.
func secretTool(t *testing.T, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	if _, err := exec.LookPath("secret-tool"); err != nil {
		t.Fatal("secret-tool not found: run tests/setup (apt-get install -y libsecret-tools)")
	}
	var out, errb bytes.Buffer
	cmd := exec.Command("secret-tool", args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// secretToolUsers lists the users of fillgate's items as secret-tool sees
// them. search prints each secret to stdout and the attributes to stderr:
// only the attribute lines are read.
func secretToolUsers(t *testing.T) []string {
	t.Helper()
	_, out, _ := secretTool(t, "search", "--all", "service", Service)
	var users []string
	for _, l := range strings.Split(string(out), "\n") {
		if u, ok := strings.CutPrefix(l, "attribute.username = "); ok {
			users = append(users, u)
		}
	}
	return users
}

func TestRealSecretService(t *testing.T) {
	ss := secretservice.Start(t)
	ctx := testctx.Within(t, 2*time.Minute)
	k := OS()
	if err := k.Check(ctx); err != nil {
		t.Fatalf("Check against a real Secret Service: %v", err)
	}
	if users := secretToolUsers(t); len(users) != 0 {
		t.Fatalf("Check left items behind: %q", users)
	}

	password, seed := leakscan.NewSecret(t), leakscan.NewSecret(t)
	a := Item{Service: "github.com", Field: FieldPassword, Account: "alice@example.com"}
	b := Item{Service: "github.com", Field: FieldOTP, Account: "alice@example.com"}
	c := Item{Service: "nas.lan:8443", Field: FieldPassword}
	for _, s := range []struct {
		it Item
		v  []byte
	}{{a, password}, {b, seed}, {c, password}} {
		if err := k.Set(ctx, s.it, s.v); err != nil {
			t.Fatalf("Set %v: %v", s.it, err)
		}
	}
	// secret-tool finds the items under service fillgate, by user, with
	// the values fillgate stored.
	users := secretToolUsers(t)
	for _, it := range []Item{a, b, c} {
		if !strings.Contains(strings.Join(users, "\n"), it.user()) {
			t.Errorf("secret-tool does not list %q: %q", it.user(), users)
		}
	}
	if v, _, err := secretTool(t, "lookup", "service", Service, "username", b.user()); err != nil || !bytes.Equal(v, seed) {
		t.Errorf("secret-tool lookup of the seed: value differed (%v)", err)
	}
	got, err := k.Get(ctx, a)
	if err != nil || !bytes.Equal(got, password) {
		t.Fatalf("Get: value differed (%v)", err)
	}
	clear(got)
	list, err := k.List(ctx)
	if err != nil || len(list) != 3 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	// Over the limit: refused before anything is stored.
	if err := k.Set(ctx, Item{Service: "big.example", Field: FieldPassword}, make([]byte, LinuxMaxValue+1)); err == nil {
		t.Fatal("Set stored a secret over the limit")
	}
	if us := secretToolUsers(t); strings.Contains(strings.Join(us, "\n"), "big.example") {
		t.Fatal("the secret over the limit reached the keyring")
	}

	// The values are only in the keyring daemon's encrypted files.
	if n := leakscan.Dirs(t, password, ss.Data, ss.Runtime); n == 0 {
		t.Fatal("the leak scan read no files")
	}
	leakscan.Dirs(t, seed, ss.Data, ss.Runtime)

	removed, err := k.Forget(ctx, "github.com", "")
	if err != nil || len(removed) != 2 {
		t.Fatalf("Forget = %+v, %v", removed, err)
	}
	if _, _, err := secretTool(t, "lookup", "service", Service, "username", a.user()); err == nil {
		t.Error("secret-tool still finds a forgotten item")
	}
	if n, err := k.ForgetAll(ctx); err != nil || n != 1 {
		t.Fatalf("ForgetAll = %d, %v", n, err)
	}
	if users := secretToolUsers(t); len(users) != 0 {
		t.Fatalf("ForgetAll left %q", users)
	}
}

func TestLockedKeyring(t *testing.T) {
	secretservice.Start(t)
	ctx := testctx.Within(t, 2*time.Minute)
	k := OS()
	it := Item{Service: "github.com", Field: FieldPassword}
	if err := k.Set(ctx, it, []byte("x")); err != nil {
		t.Fatal(err)
	}
	secretservice.Lock(t)
	for name, err := range map[string]error{
		"Available": k.Available(ctx),
		"Check":     k.Check(ctx),
		"Get":       func() error { _, err := k.Get(ctx, it); return err }(),
		"Set":       k.Set(ctx, it, []byte("y")),
		"List":      func() error { _, err := k.List(ctx); return err }(),
	} {
		var u *Unavailable
		if !errors.As(err, &u) || u.Reason != "is locked" || !strings.Contains(u.Fix, "unlock") {
			t.Errorf("%s on a locked keyring = %v; want it named locked, with the fix", name, err)
		}
	}
}

func TestNoSecretService(t *testing.T) {
	secretservice.StartBus(t)
	ctx := testctx.Within(t, 2*time.Minute)
	err := OS().Available(ctx)
	var u *Unavailable
	if !errors.As(err, &u) || !strings.Contains(u.Reason, "is not running") {
		t.Fatalf("Available with no Secret Service = %v", err)
	}
	// Nothing was started on the bus to answer (no D-Bus activation).
	if again := OS().Available(ctx); again == nil {
		t.Fatal("a Secret Service appeared on the test bus")
	}
}

func TestCheckFailsWithoutKeyring(t *testing.T) {
	// A fresh process: godbus's process-wide session-bus connection cannot
	// be one to another test's bus.
	if os.Getenv("FILLGATE_KEYCHAIN_CHILD") == "1" {
		if err := OS().Check(context.Background()); err == nil {
			fmt.Println("check succeeded")
			os.Exit(1)
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckFailsWithoutKeyring$")
	cmd.Env = append(os.Environ(), "FILLGATE_KEYCHAIN_CHILD=1", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("Check with no Secret Service: %v: %s", err, out)
	}
}

func TestCheckStartsNoBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	err := OS().Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no D-Bus session bus") {
		t.Fatalf("Check without a bus: %v", err)
	}
}
