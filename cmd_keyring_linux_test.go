package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

func runCLIInput(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, bytes.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// lookup reads an item's value with the Secret Service's own client.
func lookup(t *testing.T, user string) ([]byte, bool) {
	t.Helper()
	out, err := exec.Command("secret-tool", "lookup", "service", keychain.Service, "username", user).Output()
	return out, err == nil
}

func TestRememberSavedForget(t *testing.T) {
	root := isolate(t)
	ss := secretservice.Start(t)
	password := leakscan.NewSecret(t)
	seed := []byte("otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example")
	var outputs []string
	cli := func(stdin []byte, args ...string) (int, string, string) {
		code, out, errs := runCLIInput(t, stdin, args...)
		outputs = append(outputs, out, errs)
		return code, out, errs
	}

	code, out, errs := cli(append(password, '\n'), "remember", "--service", "GitHub.com", "--account", "alice@example.com", "--stdin")
	if code != 0 || out != "remembered the password for github.com as alice@example.com in the OS keyring\n" {
		t.Fatalf("remember: exit %d, %q, %q", code, out, errs)
	}
	if v, ok := lookup(t, "password github.com alice@example.com"); !ok || !bytes.Equal(v, password) {
		t.Fatal("secret-tool: the stored password differed (or is missing)")
	}
	if code, _, errs := cli(seed, "remember", "--service", "github.com", "--field", "otp", "--account", "alice@example.com", "--stdin"); code != 0 {
		t.Fatalf("remember otp: exit %d, %q", code, errs)
	}
	if code, _, errs := cli(password, "remember", "--service", "nas.lan:8443", "--stdin"); code != 0 {
		t.Fatalf("remember with a port: exit %d, %q", code, errs)
	}

	// A seed that is not one is refused, and not quoted. A random secret
	// alone is valid base32 about one time in ten (its alphabet is mostly
	// letters, and dashes are dropped): the "!" makes sure it is not.
	bad := append(leakscan.NewSecret(t), '!')
	code, _, errs = cli(bad, "remember", "--service", "github.com", "--field", "otp", "--stdin")
	if code != 2 || !strings.Contains(errs, "not a TOTP seed") {
		t.Fatalf("remember of a bad seed: exit %d, %q", code, errs)
	}
	leakscan.Bytes(t, bad, "the bad seed's error", []byte(errs))
	for _, c := range []struct {
		stdin []byte
		args  []string
		says  string
	}{
		{nil, []string{"remember", "--service", "github.com", "--stdin"}, "held no secret"},
		{[]byte("\n"), []string{"remember", "--service", "github.com", "--stdin"}, "held no secret"},
		{password, []string{"remember", "--service", "github.com"}, "not a terminal"},
		{password, []string{"remember", "--service", "com", "--stdin"}, "public suffix"},
		{password, []string{"remember", "--service", "github.com", "--account", "a\tb", "--stdin"}, "control character"},
		{bytes.Repeat([]byte("x"), keychain.LinuxMaxValue+1), []string{"remember", "--service", "big.example", "--stdin"}, "longer than 16384 bytes"},
	} {
		code, _, errs := cli(c.stdin, c.args...)
		if code != 2 || !strings.Contains(errs, c.says) {
			t.Errorf("%v: exit %d, %q; want a usage error saying %q", c.args, code, errs, c.says)
		}
	}

	code, out, _ = cli(nil, "saved", "--json")
	var list struct {
		Items  []keychain.Item  `json:"items"`
		Leases []map[string]any `json:"leases"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Items) != 3 || list.Leases == nil || len(list.Leases) != 0 {
		t.Fatalf("saved --json: exit %d, %q", code, out)
	}
	items := list.Items
	want := []keychain.Item{
		{Service: "github.com", Field: "otp", Account: "alice@example.com"},
		{Service: "github.com", Field: "password", Account: "alice@example.com"},
		{Service: "nas.lan:8443", Field: "password"},
	}
	for i := range want {
		if items[i] != want[i] {
			t.Errorf("saved item %d = %+v; want %+v", i, items[i], want[i])
		}
	}
	code, out, _ = cli(nil, "saved")
	if code != 0 || !strings.Contains(out, "SERVICE") || !strings.Contains(out, "nas.lan:8443  password  -") {
		t.Errorf("saved: exit %d, %q", code, out)
	}

	code, out, _ = cli(nil, "forget", "--service", "github.com", "--account", "alice@example.com")
	if code != 0 || strings.Count(out, "removed the") != 2 {
		t.Fatalf("forget: exit %d, %q", code, out)
	}
	if _, ok := lookup(t, "password github.com alice@example.com"); ok {
		t.Error("secret-tool still finds the forgotten password")
	}
	if code, out, _ := cli(nil, "forget", "--service", "github.com"); code != 0 || !strings.Contains(out, "nothing remembered for github.com") {
		t.Errorf("forget of nothing: exit %d, %q", code, out)
	}
	for _, args := range [][]string{{"forget"}, {"forget", "--all", "--service", "x.test"}, {"forget", "--account", "a"}} {
		if code, _, _ := cli(nil, args...); code != 2 {
			t.Errorf("%v: exit %d; want a usage error", args, code)
		}
	}
	if code, out, _ := cli(nil, "forget", "--all"); code != 0 || !strings.Contains(out, "(1 listed)") {
		t.Fatalf("forget --all: exit %d, %q", code, out)
	}
	if code, out, _ := cli(nil, "saved", "--json"); code != 0 || out != `{"items":[],"leases":[]}`+"\n" {
		t.Errorf("saved after forget --all: %d %q", code, out)
	}

	// The secrets are nowhere but in the keyring daemon's encrypted files.
	for _, secret := range [][]byte{password, seed} {
		leakscan.Bytes(t, secret, "the CLI's output", []byte(strings.Join(outputs, "\n")))
		leakscan.Dirs(t, secret, root, ss.Data)
	}
}

func TestRememberLockedKeyring(t *testing.T) {
	isolate(t)
	secretservice.Start(t)
	secretservice.Lock(t)
	code, _, errs := runCLIInput(t, []byte("x"), "remember", "--service", "github.com", "--stdin")
	if code != 1 || !strings.Contains(errs, "the OS keyring is locked: unlock it") {
		t.Fatalf("remember with a locked keyring: exit %d, %q", code, errs)
	}
	if code, _, errs := runCLIInput(t, nil, "saved"); code != 1 || !strings.Contains(errs, "is locked") {
		t.Fatalf("saved with a locked keyring: exit %d, %q", code, errs)
	}
}
